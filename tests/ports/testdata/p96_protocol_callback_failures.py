# Protocol callbacks that raise, on a server and on a client: a
# connection_made that raises is reported (an exception in a callback) and
# the connection goes on; an eof_received that raises is a fatal error of
# the transport (the handler hears of it, connection_lost gets the
# error); a connection_lost that raises is reported, and the server still
# lets the connection go (wait_closed returns). What the exception
# handler is told: the message's first words, the exception, and whether
# it names the transport and the protocol.
import asyncio

from probe import d, log, restart


def handler(loop, ctx):
    msg = ctx["message"]
    if msg.startswith("Exception in callback"):
        msg = "Exception in callback"
    log("handler:", msg, d(ctx.get("exception")),
        "transport" if "transport" in ctx else "-", "protocol" if "protocol" in ctx else "-")


class Touchy(asyncio.Protocol):
    def __init__(self, side):
        self.side = side

    def connection_made(self, tr):
        self.tr = tr
        log(self.side, "connection_made")
        if self.side == "server":
            raise ValueError("made")

    def data_received(self, data):
        log(self.side, "data_received", data)
        if self.side == "server":
            self.tr.write(b"ack " + data)

    def eof_received(self):
        log(self.side, "eof_received")
        if self.side == "server":
            raise KeyError("eof")
        return True

    def connection_lost(self, exc):
        log(self.side, "connection_lost", d(exc) if exc else None)
        if self.side == "client":
            raise RuntimeError("lost")


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    server = await loop.create_server(lambda: Touchy("server"), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    tr, proto = await loop.create_connection(lambda: Touchy("client"), "127.0.0.1", port)
    log("client connected, closing", tr.is_closing())
    tr.write(b"hello")
    await asyncio.sleep(0.1)
    tr.write_eof()
    await asyncio.sleep(0.1)
    log("client transport closing", tr.is_closing())
    try:
        tr.write(b"more")
    except RuntimeError as e:
        log("write after write_eof:", d(e))
    await asyncio.sleep(0.1)
    server.close()
    await server.wait_closed()
    log("server closed")
    tr.close()
    await asyncio.sleep(0.1)
    log("done")


asyncio.run(main())
