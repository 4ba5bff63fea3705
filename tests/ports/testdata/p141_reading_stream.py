# Async generators over a queue of readings, consumed with `async for`:
# one broken out of at a STOP marker (aclosing: the generator's finally,
# which awaits, runs before the loop ends), one under asyncio.timeout()
# whose cancellation arrives inside the generator's await (its except
# CancelledError and finally run, the timeout raises TimeoutError), one
# whose generator raises on a bad reading in a comprehension, and one
# that ends on its own. A generator holding an asyncio.timeout() across
# its yields: the deadline passing inside it is its TimeoutError; passing
# while the consumer awaits between items, it is the consumer's await
# that is cancelled, the generator is closed (GeneratorExit) with the
# timeout expired, and the task ends cancelled with cancelling() 0.
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


    for tag, pause in [("s1", 0.08), ("s2", 0.15)]:
        t = asyncio.create_task(consume_burst(tag, pause))
        try:
            await t
        except BaseException as e:
            log(tag, "task ->", d(e), "cancelled", t.cancelled())


async def burst(tag):
    try:
        async with asyncio.timeout(0.1) as cm:
            yield 1
            await asyncio.sleep(0.05)
            yield 2
    except TimeoutError:
        log(tag, "burst timed out")
        raise
    except GeneratorExit:
        log(tag, "burst closed, expired", cm.expired())
        raise


async def consume_burst(tag, pause):
    t = asyncio.current_task()
    try:
        async with aclosing(burst(tag)) as gen:
            async for x in gen:
                log(tag, "got", x)
                await asyncio.sleep(pause)
        log(tag, "done")
    except BaseException as e:
        log(tag, "consumer leaves with", d(e), "cancelling", t.cancelling())
        raise


asyncio.run(main())
