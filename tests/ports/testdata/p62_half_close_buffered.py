# Protocols on both ends (no streams). The server counts what it receives
# and answers only at the client's EOF: its eof_received() returns True,
# so the connection stays half-open while it writes the answer, then it
# closes (twice, and aborts after: connection_lost comes once). The client
# is a BufferedProtocol reading into a 4-byte buffer: the answer arrives
# in 4-byte pieces, then EOF; its eof_received() returns None, so its
# transport closes itself.
import asyncio

from probe import d, log, restart


class Counter(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.n = 0
        log("server: connection from", transport.get_extra_info("peername")[0])

    def data_received(self, data):
        self.n += len(data)

    def eof_received(self):
        log("server: eof_received after", self.n, "bytes, can_write_eof", self.transport.can_write_eof())
        asyncio.get_running_loop().call_later(0.1, self.answer)
        return True

    def answer(self):
        log("server: answers, closing", self.transport.is_closing())
        self.transport.write(b"total %d bytes\n" % self.n)
        self.transport.close()
        self.transport.close()
        self.transport.abort()
        log("server: closed, closing", self.transport.is_closing())

    def connection_lost(self, exc):
        log("server: connection_lost", exc)


class Pieces(asyncio.BufferedProtocol):
    def __init__(self, done):
        self.done = done
        self.buf = bytearray(4)
        self.pieces = []
        self.hints = set()

    def connection_made(self, transport):
        self.transport = transport

    def get_buffer(self, sizehint):
        self.hints.add(sizehint)
        return self.buf

    def buffer_updated(self, nbytes):
        self.pieces.append(bytes(self.buf[:nbytes]))

    def eof_received(self):
        log("client: eof_received, pieces", self.pieces, "hints", sorted(self.hints))

    def connection_lost(self, exc):
        log("client: connection_lost", exc, "closing", self.transport.is_closing())
        self.done.set_result(None)


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Counter, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    done = loop.create_future()
    transport, proto = await loop.create_connection(lambda: Pieces(done), "127.0.0.1", port)
    transport.write(b"hello ")
    await asyncio.sleep(0.1)
    transport.writelines([b"wor", b"ld"])
    transport.write_eof()
    log("client: wrote eof, closing", transport.is_closing())
    try:
        transport.write(b"more")
    except RuntimeError as e:
        log("client:", d(e))
    await done
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
