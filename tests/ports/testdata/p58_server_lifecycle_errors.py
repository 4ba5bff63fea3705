# A server's life and the errors around it: created with
# start_serving=False (bound, not listening: a client is refused), then
# served; a handler that raises reaches the loop's exception handler and
# its connection is closed; a Protocol whose data_received raises loses
# its connection with that error; writes after write_eof() and after
# close(); both ends' addresses; serve_forever() cancelled closes the
# server; `async with server` closes it on the way out.
import asyncio

from probe import d, log, restart


def handler(loop, ctx):
    log("exception handler:", ctx["message"], d(ctx.get("exception")),
        "transport" if "transport" in ctx else "", "protocol" if "protocol" in ctx else "")


class Fragile(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        log("fragile: data_received", data)
        if data.startswith(b"bad"):
            raise ValueError("bad data")
        self.transport.write(b"ok\n")

    def connection_lost(self, exc):
        log("fragile: connection_lost", d(exc) if exc else None)


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)

    async def handle(reader, writer):
        line = await reader.readline()
        if line.startswith(b"raise"):
            raise ValueError("handler failed")
        peer, me = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
        log("server: peer host", peer[0], "own host", me[0], "ports differ", peer[1] != me[1])
        writer.write(line)
        await writer.drain()
        log("server: client's EOF", await reader.read(), "at_eof", reader.at_eof())
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, start_serving=False)
    port = server.sockets[0].getsockname()[1]
    restart()
    log("not serving yet:", server.is_serving())
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        log("client refused:", d(e))
    await server.start_serving()
    log("serving:", server.is_serving())

    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"raise please\n")
    log("client after a failed handler reads", await r.read(), "at_eof", r.at_eof())
    w.close()
    w.write(b"after close")
    log("write after close: no error, closing", w.is_closing())
    try:
        await w.drain()
        log("drain after close: returned")
    except ConnectionError as e:
        log("drain after close:", d(e))
    await w.wait_closed()

    await asyncio.sleep(0.1)
    r, w = await asyncio.open_connection("127.0.0.1", port)
    log("client: server host", w.get_extra_info("peername")[0])
    w.write(b"echo me\n")
    log("client got", await r.readline())
    w.write_eof()
    try:
        w.write(b"more")
    except RuntimeError as e:
        log("write after write_eof:", d(e))
    log("client reads", await r.read(), "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()

    await asyncio.sleep(0.1)
    fragile = await loop.create_server(Fragile, "127.0.0.1", 0)
    fport = fragile.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("127.0.0.1", fport)
    w.write(b"fine\n")
    log("client got", await r.readline())
    await asyncio.sleep(0.1)
    w.write(b"bad\n")
    log("client reads", await r.read(), "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()
    fragile.close()
    await fragile.wait_closed()

    await asyncio.sleep(0.1)
    forever = asyncio.create_task(server.serve_forever())
    await asyncio.sleep(0.1)
    try:
        await server.serve_forever()
    except RuntimeError as e:
        log("second serve_forever:", d(e).replace(repr(server), "<Server>"))
    forever.cancel()
    try:
        await forever
    except asyncio.CancelledError:
        log("serve_forever cancelled, serving", server.is_serving())
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        log("client after serve_forever:", d(e))

    async with await asyncio.start_server(handle, "127.0.0.1", 0) as s2:
        log("in async with: serving", s2.is_serving())
    log("after async with: serving", s2.is_serving())


asyncio.run(main())
