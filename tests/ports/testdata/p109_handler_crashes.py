# A line server whose request handler has bugs: on some input it raises.
# asyncio reports "Unhandled exception in client_connected_cb" to the
# loop's exception handler (which prints the context's keys) and closes
# the connection: the client reads the replies sent before the crash,
# then EOF. A handler that crashes after its client went away is reported
# the same way; other clients are not affected. A handler task cancelled
# by the application (a registry of handler tasks, as servers keep for
# shutdown) is not reported, and its connection is closed too.
import asyncio

from probe import d, log, restart

handlers = set()


def on_error(loop, ctx):
    log("report:", ctx["message"], d(ctx.get("exception")), sorted(ctx))


async def handle(reader, writer):
    me = asyncio.current_task()
    handlers.add(me)
    try:
        while line := await reader.readline():
            cmd = line.decode().strip()
            if cmd == "div0":
                writer.write(str(1 / 0).encode())
            elif cmd.startswith("late"):
                await asyncio.sleep(0.2)
                raise RuntimeError("crashed late")
            elif cmd == "wait":
                await asyncio.sleep(10)
            writer.write(b"ok " + cmd.encode() + b"\n")
            await writer.drain()
        writer.close()
        await writer.wait_closed()
    finally:
        handlers.discard(me)


async def client(port, name, lines, pause=0):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for line in lines:
        writer.write(line.encode() + b"\n")
    got = []
    if pause:
        await asyncio.sleep(pause)
        writer.close()
        await writer.wait_closed()
        log(name, "left early")
        return
    for _ in lines:
        line = await reader.readline()
        if not line:
            log(name, "read", got, "then EOF")
            break
        got.append(line.decode().strip())
    else:
        log(name, "read", got)
    writer.close()
    await writer.wait_closed()


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(on_error)
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    await client(port, "a", ["one", "two", "div0", "three"])
    await asyncio.gather(client(port, "b", ["late"], pause=0.1), client(port, "c", ["x", "y"]))
    await asyncio.sleep(0.2)
    log("handlers left", len(handlers))

    waiting = asyncio.create_task(client(port, "d", ["first", "wait"]))
    await asyncio.sleep(0.1)
    for h in list(handlers):
        h.cancel()
    await waiting
    await asyncio.sleep(0)
    log("handlers left", len(handlers))
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
