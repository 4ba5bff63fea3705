# Downloads under asyncio.timeout() whose deadline each received chunk
# pushes back (reschedule from inside the block); a stalled one expires.
# A timeout(None) armed later, rescheduled into the past (it fires on the
# next loop iteration), and rescheduled after it expired (RuntimeError).
# wait_for nested inside timeout(): the inner one expiring is caught in
# the block, the outer one expiring first turns the wait_for's
# cancellation into the outer TimeoutError; an inner timeout pushed past
# the outer one leaves the outer to fire and reports expired() False.
import asyncio

from probe import d, log, rel, restart


async def download(name, gaps):
    loop = asyncio.get_running_loop()
    got = 0
    try:
        async with asyncio.timeout(0.25) as cm:
            for gap in gaps:
                await asyncio.sleep(gap)
                got += 1
                cm.reschedule(loop.time() + 0.26)
                log(name, "chunk", got, "deadline", rel(cm.when()))
        log(name, "complete", got, "expired", cm.expired())
    except TimeoutError:
        log(name, "stalled after", got, "expired", cm.expired())


async def slow(name, delay):
    try:
        await asyncio.sleep(delay)
        return name
    except asyncio.CancelledError:
        log(name, "cancelled")
        raise


async def main():
    restart()
    loop = asyncio.get_running_loop()
    await asyncio.gather(download("d1", [0.1, 0.2, 0.17]), download("d2", [0.12, 0.3, 0.1]))

    restart()
    try:
        async with asyncio.timeout(None) as cm:
            log("armed", rel(cm.when()))
            await asyncio.sleep(0.1)
            cm.reschedule(loop.time() - 1)
            log("rescheduled into the past", rel(cm.when()), "expired", cm.expired())
            await asyncio.sleep(0)
            log("not reached")
    except TimeoutError:
        log("past deadline fired, expired", cm.expired())
    try:
        cm.reschedule(loop.time() + 1)
    except RuntimeError as e:
        log("reschedule after expiry:", d(e))

    restart()
    async with asyncio.timeout(0.5) as outer:
        try:
            await asyncio.wait_for(slow("inner", 1), 0.2)
        except TimeoutError:
            log("wait_for timed out inside, outer expired", outer.expired())
        r = await asyncio.wait_for(slow("quick", 0.1), 0.2)
        log("quick returned", r)
    log("outer left, expired", outer.expired())

    restart()
    try:
        async with asyncio.timeout(0.3) as outer:
            await asyncio.wait_for(slow("long", 1), 0.6)
    except TimeoutError:
        log("outer fired over wait_for, expired", outer.expired())

    restart()
    try:
        async with asyncio.timeout(0.3) as outer:
            async with asyncio.timeout(0.1) as inner:
                inner.reschedule(loop.time() + 0.5)
                await slow("nested", 1)
    except TimeoutError:
        log("outer fired, inner expired", inner.expired(), "outer expired", outer.expired(), "inner when", rel(inner.when()))


asyncio.run(main())
