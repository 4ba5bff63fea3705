# A line server read with `async for line in reader` (limit=32: a longer
# line ends the loop with ValueError, and the reader is still usable); a
# handler task cancelled from outside (its connection is closed); then a
# TaskGroup of requests where one fails (nobody listens): the others,
# waiting for their answers, are cancelled, close their connections in
# `finally`, and the server sees them leave.
import asyncio

from probe import d, log, restart


async def main():
    handlers = {}

    async def handle(reader, writer):
        name = (await reader.readline()).decode().strip()
        handlers[name] = asyncio.current_task()
        try:
            while True:
                try:
                    async for line in reader:
                        if line.startswith(b"SLOW"):
                            await asyncio.sleep(1)
                        writer.write(b"got " + line)
                    break
                except ValueError as e:
                    log("server:", name, "async for ended", d(e))
            log("server:", name, "left, at_eof", reader.at_eof())
        except asyncio.CancelledError:
            log("server:", name, "handler cancelled")
            raise

    server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=32)
    port = server.sockets[0].getsockname()[1]
    restart()

    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.writelines([b"c1\n", b"one\n", b"two\n"])
    log("c1 reads", await r.readline(), await r.readline())
    await asyncio.sleep(0.1)
    w.write(b"x" * 40 + b"\nthree\n")
    log("c1 reads", await r.readline())
    await asyncio.sleep(0.1)
    handlers["c1"].cancel()
    log("c1 reads", await r.read(), "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()

    await asyncio.sleep(0.1)
    closed = await asyncio.start_server(handle, "127.0.0.1", 0)
    closed_port = closed.sockets[0].getsockname()[1]
    closed.close()
    await closed.wait_closed()

    cancelled = []

    async def request(name, port, delay):
        await asyncio.sleep(delay)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(f"{name}\nSLOW\n".encode())
            return await reader.readline()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        finally:
            writer.close()
            await writer.wait_closed()

    try:
        async with asyncio.TaskGroup() as tg:
            for name, p, delay in (("t1", port, 0), ("t2", closed_port, 0.2), ("t3", port, 0.1)):
                tg.create_task(request(name, p, delay))
    except* OSError as eg:
        log("group:", d(eg), "cancelled while waiting:", sorted(cancelled))
    await asyncio.sleep(0.1)
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
