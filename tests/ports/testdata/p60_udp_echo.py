# A UDP request/response client (connected datagram endpoint) against an
# echo server that drops some requests and answers one late: each request
# waits for its answer with a timeout, and the late answer turns up in the
# queue afterwards. Once the server's endpoint is closed, the connected
# client's next datagrams come back as error_received(ConnectionRefused-
# Error) (ICMP port unreachable) and the endpoint stays open; an
# unconnected endpoint sending there hears nothing.
import asyncio

from probe import d, log, restart


class Echo(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        log("server: got", data, "from", addr[0])
        if data.startswith(b"drop"):
            return
        if data.startswith(b"slow"):
            asyncio.get_running_loop().call_later(0.3, self.transport.sendto, data.upper(), addr)
        else:
            self.transport.sendto(data.upper(), addr)

    def connection_lost(self, exc):
        log("server: connection_lost", exc)


class Client(asyncio.DatagramProtocol):
    def __init__(self, name):
        self.name = name
        self.q = asyncio.Queue()

    def datagram_received(self, data, addr):
        self.q.put_nowait((data, addr[0]))

    def error_received(self, exc):
        log(self.name, "error_received", d(exc))

    def connection_lost(self, exc):
        log(self.name, "connection_lost", exc)


async def main():
    loop = asyncio.get_running_loop()
    st, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
    port = st.get_extra_info("sockname")[1]
    restart()
    ct, cp = await loop.create_datagram_endpoint(lambda: Client("client"), remote_addr=("127.0.0.1", port))
    log("client peer", ct.get_extra_info("peername")[0], "same port", ct.get_extra_info("peername")[1] == port)

    async def ask(msg):
        ct.sendto(msg)
        try:
            async with asyncio.timeout(0.2):
                return await cp.q.get()
        except TimeoutError:
            return "timeout"

    for msg in (b"hello", b"drop me", b"slow one", b"bye"):
        log("client asks", msg, "->", await ask(msg))
    await asyncio.sleep(0.2)
    log("client queue", cp.q.qsize(), cp.q.get_nowait() if cp.q.qsize() else None)

    st.close()
    await asyncio.sleep(0.1)
    log("client asks", b"anyone?", "->", await ask(b"anyone?"))
    log("client closing", ct.is_closing())

    ut, up = await loop.create_datagram_endpoint(lambda: Client("unconnected"), local_addr=("127.0.0.1", 0))
    ut.sendto(b"anyone?", ("127.0.0.1", port))
    await asyncio.sleep(0.1)
    log("unconnected queue", up.q.qsize())
    ut.close()
    ct.close()
    await asyncio.sleep(0)
    log("done")


asyncio.run(main())
