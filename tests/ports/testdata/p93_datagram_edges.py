# A UDP service and its clients around the edges of datagram transports:
# both ends' addresses (an unconnected endpoint has no peername), an empty
# datagram is a datagram, a connected endpoint refuses another address
# (ValueError) and after close() drops what it is given without a word;
# a datagram_received that raises reaches the loop's exception handler
# and the endpoint goes on receiving; abort() loses the endpoint at once;
# the write buffer stays empty on loopback.
import asyncio

from probe import d, log, restart


def handler(loop, ctx):
    msg = ctx["message"]
    log("exception handler:", msg[:len("Exception in callback")], d(ctx.get("exception")))


class Server(asyncio.DatagramProtocol):
    def connection_made(self, tr):
        self.tr = tr
        log("server: connection_made, peername", tr.get_extra_info("peername"))

    def datagram_received(self, data, addr):
        log("server: got", data, "from the client", addr[1] == CPORT)
        if data == b"crash":
            raise ValueError("cannot parse")
        self.tr.sendto(b"<" + data + b">", addr)

    def error_received(self, exc):
        log("server: error_received", d(exc))

    def connection_lost(self, exc):
        log("server: connection_lost", exc)


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.q = asyncio.Queue()

    def connection_made(self, tr):
        log("client: connection_made, peer is server", tr.get_extra_info("peername")[1] == SPORT)

    def datagram_received(self, data, addr):
        self.q.put_nowait(data)

    def error_received(self, exc):
        log("client: error_received", d(exc))

    def connection_lost(self, exc):
        log("client: connection_lost", exc)


async def main():
    global SPORT, CPORT
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()
    st, sp = await loop.create_datagram_endpoint(Server, local_addr=("127.0.0.1", 0))
    SPORT = st.get_extra_info("sockname")[1]
    ct, cp = await loop.create_datagram_endpoint(Client, remote_addr=("127.0.0.1", SPORT))
    CPORT = ct.get_extra_info("sockname")[1]

    async def ask(msg):
        ct.sendto(msg)
        try:
            async with asyncio.timeout(0.2):
                return await cp.q.get()
        except TimeoutError:
            return "timeout"

    log("client asks", b"hi", "->", await ask(b"hi"))
    log("client asks", b"", "->", await ask(b""))
    log("client asks", b"crash", "->", await ask(b"crash"))
    log("client asks", b"again", "->", await ask(b"again"))
    try:
        ct.sendto(b"elsewhere", ("127.0.0.1", SPORT + 1))
    except ValueError as e:
        log("sendto another address:", type(e).__name__)
    log("buffer sizes", st.get_write_buffer_size(), ct.get_write_buffer_size())

    await asyncio.sleep(0.1)
    ct.close()
    log("client closing", ct.is_closing())
    ct.sendto(b"after close")
    ct.sendto(b"after close")
    await asyncio.sleep(0.1)
    log("client queue", cp.q.qsize())

    st.abort()
    log("server aborted, closing", st.is_closing())
    await asyncio.sleep(0)
    log("done")


asyncio.run(main())
