# A cached fetcher on a loop with eager_task_factory: a lookup whose key is
# cached finishes inside create_task (done before it returns, never
# scheduled), one that must go to the server runs eagerly up to its first
# real wait (open_connection) and is then scheduled as usual; concurrent
# misses for one key share an in-flight future. The order of the log
# lines shows which part ran eagerly.
import asyncio

from probe import d, log, restart

cache = {}
inflight = {}


async def handle(reader, writer):
    key = (await reader.readline()).decode().strip()
    await asyncio.sleep(0.1 if key != "slow" else 0.27)
    if key == "missing":
        writer.write(b"ERR\n")
    else:
        writer.write(f"value-of-{key}\n".encode())
    await writer.drain()
    writer.close()
    await writer.wait_closed()


async def fetch(port, key):
    log("fetch", key, "starts")
    if key in cache:
        log("fetch", key, "hit")
        return cache[key]
    if key in inflight:
        log("fetch", key, "joins in-flight")
        return await inflight[key]
    fut = asyncio.get_running_loop().create_future()
    inflight[key] = fut
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        log("fetch", key, "connected")
        writer.write(key.encode() + b"\n")
        line = (await reader.readline()).decode().strip()
        writer.close()
        await writer.wait_closed()
        if line == "ERR":
            raise KeyError(key)
        cache[key] = line
        fut.set_result(line)
        return line
    except BaseException as e:
        fut.set_exception(e)
        fut.exception()
        raise
    finally:
        del inflight[key]


async def main():
    restart()
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    cache["warm"] = "value-of-warm"

    for round_keys in (["warm", "a", "a", "slow"], ["a", "missing", "slow", "b"]):
        tasks = []
        for k in round_keys:
            t = asyncio.create_task(fetch(port, k))
            log("created", k, "done:", t.done())
            tasks.append(t)
        res = await asyncio.gather(*tasks, return_exceptions=True)
        log("round", [d(r) if isinstance(r, BaseException) else r for r in res])
    log("cache", sorted(cache))
    server.close()
    await server.wait_closed()


asyncio.run(main())
