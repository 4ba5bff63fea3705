# A collector that reads from three feed servers at once in a TaskGroup:
# each reader parses "key=value" lines; one feed sends a malformed line,
# its reader raises, and the group cancels the other two mid-read (inside
# readline), whose cleanup closes their connections; the servers see the
# clients go away. The collector reports what it had read before the
# failure, and the ExceptionGroup.
import asyncio

from probe import d, log, restart

FEEDS = {
    "alpha": [(0.03, "a=1"), (0.05, "b=2"), (0.1, "c=3")],
    "beta": [(0.04, "x=9"), (0.06, "oops"), (0.2, "y=8")],
    "gamma": [(0.02, "p=5"), (0.3, "q=6")],
}


async def feed_server(name):
    async def handle(reader, writer):
        try:
            for delay, line in FEEDS[name]:
                await asyncio.sleep(delay)
                writer.write(line.encode() + b"\n")
                await writer.drain()
            log(f"{name}: sent all")
        except ConnectionError as e:
            log(f"{name}: client gone while sending,", d(e))
        finally:
            rest = await reader.read()
            log(f"{name}: client closed, read {rest!r}")
            writer.close()
            await writer.wait_closed()
    return await asyncio.start_server(handle, "127.0.0.1", 0)


async def collect(name, port, seen):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while line := await reader.readline():
            key, sep, value = line.decode().strip().partition("=")
            if not sep:
                raise ValueError(f"{name}: bad line {line!r}")
            seen.setdefault(name, []).append((key, int(value)))
            log(name, "read", key, value)
    except asyncio.CancelledError:
        log(name, "cancelled mid-read with", len(seen.get(name, [])), "values")
        raise
    finally:
        writer.close()
        await writer.wait_closed()


async def main():
    restart()
    servers = {n: await feed_server(n) for n in FEEDS}
    seen = {}
    try:
        async with asyncio.TaskGroup() as tg:
            for n, s in servers.items():
                tg.create_task(collect(n, s.sockets[0].getsockname()[1], seen), name=f"collect-{n}")
    except* ValueError as eg:
        log("collector failed:", d(eg))
    log("seen", sorted(seen.items()))
    await asyncio.sleep(0.05)
    for s in servers.values():
        s.close()
        await s.wait_closed()
    log("servers closed")


asyncio.run(main())
