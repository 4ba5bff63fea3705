# A UDP echo pair on create_datagram_endpoint: the server bound with
# local_addr, the client connected with remote_addr. The client sends
# with sendto(data) and sendto(data, None); naming another address on a
# connected transport is a ValueError at the call; an empty datagram
# travels as one (the server echoes b''). The server sees the client's
# address, the client's peername is the server's.
import asyncio

from probe import log, restart


class Echo(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        log("server: got", data)
        self.transport.sendto(data, addr)


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.got = asyncio.Queue()

    def datagram_received(self, data, addr):
        self.got.put_nowait(data)

    def connection_lost(self, exc):
        log("client: lost", exc)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    st, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.1", 0))
    port = st.get_extra_info("sockname")[1]
    ct, cp = await loop.create_datagram_endpoint(Client, remote_addr=("127.0.0.1", port))
    log("client peer is server:", ct.get_extra_info("peername") == ("127.0.0.1", port))
    ct.sendto(b"one")
    log("client: echo", await cp.got.get())
    await asyncio.sleep(0.1)
    ct.sendto(b"two", None)
    log("client: echo", await cp.got.get())
    try:
        ct.sendto(b"three", ("127.0.0.1", port + 1 if port < 65535 else port - 1))
    except ValueError as e:
        log("client: sendto elsewhere:", type(e).__name__, str(e).split(":")[0])
    await asyncio.sleep(0.1)
    ct.sendto(b"")
    log("client: echo", await cp.got.get())
    log("client still open:", not ct.is_closing(), "buffer", ct.get_write_buffer_size())
    ct.close()
    st.close()
    await asyncio.sleep(0)
    log("done")


asyncio.run(main())
