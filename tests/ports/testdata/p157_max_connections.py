# A server that serves at most two connections at a time: a handler that
# finds the semaphore locked answers "BUSY" and closes at once; clients
# that were refused retry after a pause. A handler that fails (the client
# sent a bad command) still gives its slot back, and the server counts the
# connections it has refused, served and failed.
import asyncio

from probe import d, log, restart

MAX = 2
stats = {"served": 0, "refused": 0, "failed": 0}


async def handle(reader, writer, sem):
    if sem.locked():
        stats["refused"] += 1
        writer.write(b"BUSY\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        return
    async with sem:
        writer.write(b"WELCOME\n")
        try:
            while line := await reader.readline():
                cmd = line.decode().strip()
                if cmd == "boom":
                    raise ValueError("bad command")
                await asyncio.sleep(0.06)
                writer.write(f"done {cmd}\n".encode())
                await writer.drain()
            stats["served"] += 1
        except ValueError as e:
            stats["failed"] += 1
            writer.write(f"ERR {e}\n".encode())
            await writer.drain()
        finally:
            writer.close()
            await writer.wait_closed()


async def client(name, port, cmds, start):
    await asyncio.sleep(start)
    for attempt in range(1, 4):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        hello = (await reader.readline()).decode().strip()
        if hello == "BUSY":
            log(name, "refused on attempt", attempt)
            writer.close()
            await writer.wait_closed()
            await asyncio.sleep(0.13)
            continue
        log(name, "admitted on attempt", attempt)
        got = []
        for cmd in cmds:
            writer.write(f"{cmd}\n".encode())
            line = (await reader.readline()).decode().strip()
            got.append(line)
            if line.startswith("ERR"):
                break
        writer.write_eof()
        rest = await reader.read()
        log(name, "got", got, "then", rest)
        writer.close()
        await writer.wait_closed()
        return
    log(name, "gave up")


async def main():
    restart()
    sem = asyncio.Semaphore(MAX)
    server = await asyncio.start_server(lambda r, w: handle(r, w, sem), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await asyncio.gather(
            client("a", port, ["x", "y", "z"], 0),
            client("b", port, ["boom", "never"], 0.01),
            client("c", port, ["p"], 0.02),
            client("d", port, ["q", "r"], 0.03),
            client("e", port, ["s"], 0.04),
        )
        log("stats", stats, "locked", sem.locked())
    log("server closed, serving", server.is_serving())


asyncio.run(main())
