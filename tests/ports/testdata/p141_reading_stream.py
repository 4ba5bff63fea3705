# Async generators over a queue of readings, consumed with `async for`:
# one broken out of at a STOP marker (aclosing: the generator's finally,
# which awaits, runs before the loop ends), one under asyncio.timeout()
# whose cancellation arrives inside the generator's await (its except
# CancelledError and finally run, the timeout raises TimeoutError), one
# whose generator raises on a bad reading in a comprehension, and one
# that ends on its own.
import asyncio
from contextlib import aclosing

from probe import d, log, restart


async def readings(name, q):
    n = 0
    try:
        while True:
            item = await q.get()
            if item is None:
                return
            if item == "bad":
                raise ValueError(f"{name} bad reading")
            n += 1
            yield item
    except asyncio.CancelledError as e:
        log(name, "cancelled after", n, d(e))
        raise
    finally:
        await asyncio.sleep(0.01)
        log(name, "closed after", n)


async def feed(q, items, gap):
    for it in items:
        await asyncio.sleep(gap)
        q.put_nowait(it)


async def main():
    restart()
    q = asyncio.Queue()
    feeder = asyncio.create_task(feed(q, ["a", "b", "STOP", "c"], 0.1))
    async with aclosing(readings("r1", q)) as gen:
        async for item in gen:
            log("r1 got", item)
            if item == "STOP":
                break
    log("after r1, queue", q.qsize())
    await feeder
    log("feeder done, queue", q.qsize())

    q2 = asyncio.Queue()
    feeder = asyncio.create_task(feed(q2, ["x", "y"], 0.12))
    try:
        async with asyncio.timeout(0.3) as cm:
            async with aclosing(readings("r2", q2)) as gen:
                async for item in gen:
                    log("r2 got", item)
    except TimeoutError:
        log("r2 timed out, expired", cm.expired())
    log("feeder done", feeder.done())

    q3 = asyncio.Queue()
    for it in ["1", "2", "bad", "3"]:
        q3.put_nowait(it)
    try:
        got = [x async for x in readings("r3", q3)]
        log("r3 got", got)
    except ValueError as e:
        log("r3 failed", d(e), "left", q3.qsize())

    q4 = asyncio.Queue()
    for it in ["p", "q", None]:
        q4.put_nowait(it)
    got = [x.upper() async for x in readings("r4", q4)]
    log("r4", got)


asyncio.run(main())
