# async for over as_completed(timeout=0.4): results in completion order, a
# failure read from its task, a duplicate input counted once, then the
# TimeoutError; the tasks still pending are not cancelled and are awaited
# afterwards.
import asyncio

from probe import log, restart


async def job(name, delay, fail=False):
    await asyncio.sleep(delay)
    if fail:
        raise ValueError(name)
    return name


async def main():
    restart()
    ts = [asyncio.create_task(job("c", 0.5)), asyncio.create_task(job("a", 0.1)),
          asyncio.create_task(job("d", 0.7)), asyncio.create_task(job("b", 0.3, fail=True))]
    n = 0
    try:
        async for f in asyncio.as_completed(ts + [ts[1]], timeout=0.4):
            n += 1
            try:
                log("got", await f, "index", ts.index(f))
            except ValueError as e:
                log("failed", e, "index", ts.index(f))
    except TimeoutError:
        log("timeout after", n, "items; done:", [t.done() for t in ts],
            "cancelled:", [t.cancelled() for t in ts])
    for t in ts:
        if not t.done():
            log("late", await t)


asyncio.run(main())
