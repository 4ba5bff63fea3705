# A service keeps its storage on an event loop of its own, in a second
# thread (one loop per thread), and the main loop calls it with
# run_coroutine_threadsafe, awaiting the concurrent future through
# wrap_future: a put that first calls back into the main loop the same
# way (an audit hook), a get, a put that raises on the storage loop (the
# exception comes back to the caller), a slow scan the caller gives up
# on with wait_for (the cancellation reaches the storage loop's task,
# which notes it for the main loop to print later: wait_for does not
# wait for the remote task to end),
# and a stop signal sent with call_soon_threadsafe, after which the
# thread is joined. Every cross-loop step is a request/response, so no
# two lines race; both loops read the same monotonic clock.
import asyncio
import threading

from probe import d, log, restart

store = {}
events = []


async def audit(key):
    await asyncio.sleep(0.02)
    log("main: audit", key)
    return "ok"


async def get(key):
    await asyncio.sleep(0.03)
    log("storage: get", key)
    return store.get(key)


async def put(key, value, main_loop):
    await asyncio.sleep(0.04)
    if value is None:
        raise ValueError(f"no value for {key}")
    ok = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(audit(key), main_loop))
    store[key] = value
    log("storage: put", key, "audit", ok)
    return len(store)


async def scan():
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        events.append("scan cancelled")
        raise


def storage_thread(ready, holder):
    async def serve():
        holder["loop"] = asyncio.get_running_loop()
        holder["stop"] = stop = asyncio.Event()
        ready.set()
        await stop.wait()
        log("storage: loop stopping, keys", sorted(store))

    asyncio.run(serve())


async def main():
    loop = asyncio.get_running_loop()
    restart()
    ready, holder = threading.Event(), {}
    th = threading.Thread(target=storage_thread, args=(ready, holder))
    th.start()
    await asyncio.to_thread(ready.wait)
    sl = holder["loop"]

    def call(coro):
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, sl))

    log("main: put a ->", await call(put("a", 1, loop)))
    log("main: get a ->", await call(get("a")))
    try:
        await call(put("b", None, loop))
    except ValueError as e:
        log("main: put b failed", d(e))
    try:
        await asyncio.wait_for(call(scan()), 0.2)
    except TimeoutError:
        log("main: scan timed out")
    await asyncio.sleep(0.08)
    log("main: storage saw", events)
    log("main: put c ->", await call(put("c", 3, loop)))
    log("main: get b ->", await call(get("b")))
    sl.call_soon_threadsafe(holder["stop"].set)
    await asyncio.to_thread(th.join)
    log("main: storage thread joined")


asyncio.run(main())
