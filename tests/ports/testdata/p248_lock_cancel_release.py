# "asyncio lock does not get released after task is canceled",
# https://github.com/python/cpython/issues/88157 (bpo-43991)
# The reporter's tasks acquired a Lock and were cancelled; the answer:
# `async with lock` (or try/finally) releases it on cancellation; a bare
# acquire() ... release() with an await in between does not, and a
# cancelled *waiter* never holds it. Adapted: three workers on one lock,
# each holding it 0.2 s; the holder cancelled at 0.1 s (released by
# async with), a waiter cancelled while queued, then a bare-acquire
# worker cancelled inside: the lock stays locked.
import asyncio

from probe import d, log, restart


async def worker(name, lock):
    log(name, "waiting")
    try:
        async with lock:
            log(name, "holds the lock")
            await asyncio.sleep(0.2)
            log(name, "releases")
    except asyncio.CancelledError:
        log(name, "cancelled; locked:", lock.locked())
        raise


async def bare(name, lock):
    await lock.acquire()
    log(name, "acquired (bare)")
    await asyncio.sleep(0.2)
    lock.release()
    log(name, "released (bare)")


async def main():
    restart()
    lock = asyncio.Lock()
    a = asyncio.create_task(worker("a", lock))
    b = asyncio.create_task(worker("b", lock))
    c = asyncio.create_task(worker("c", lock))
    await asyncio.sleep(0.1)
    a.cancel()
    b.cancel()
    await asyncio.gather(a, b, c, return_exceptions=True)
    log("states", a.cancelled(), b.cancelled(), c.cancelled(), "locked", lock.locked())

    restart()
    t = asyncio.create_task(bare("x", lock))
    await asyncio.sleep(0.1)
    t.cancel()
    await asyncio.gather(t, return_exceptions=True)
    log("bare task cancelled; locked:", lock.locked())
    try:
        async with asyncio.timeout(0.2):
            await lock.acquire()
    except TimeoutError:
        log("nobody can take it now")


asyncio.run(main())
