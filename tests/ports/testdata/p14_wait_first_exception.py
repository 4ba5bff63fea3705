# A fan-out with wait(FIRST_EXCEPTION): when one fetch fails, the pending
# ones are cancelled with a message and reaped with
# gather(return_exceptions=True); one of them needs a moment to clean up.
# Then wait(timeout=) returns the split without cancelling anything, and
# wait(FIRST_COMPLETED) on tasks that are already done still yields.
import asyncio

from probe import d, log, restart


async def fetch(name, delay, fail=False, cleanup=0.0):
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError as e:
        if cleanup:
            await asyncio.sleep(cleanup)
        log(name, "cancelled", d(e))
        raise
    if fail:
        raise ConnectionError(name)
    return name


def names(s):
    return sorted(t.get_name() for t in s)


async def main():
    restart()
    ts = [asyncio.create_task(fetch("a", 0.1), name="a"),
          asyncio.create_task(fetch("b", 0.2, fail=True), name="b"),
          asyncio.create_task(fetch("c", 0.5, cleanup=0.1), name="c"),
          asyncio.create_task(fetch("d", 0.6), name="d")]
    done, pending = await asyncio.wait(ts, return_when=asyncio.FIRST_EXCEPTION)
    log("done", names(done), "pending", names(pending))
    for t in ts:
        if t in pending:
            t.cancel("cleanup")
    res = await asyncio.gather(*ts, return_exceptions=True)
    log("reaped", [d(r) for r in res])

    restart()
    slow = asyncio.create_task(fetch("slow", 0.3), name="slow")
    done, pending = await asyncio.wait([slow], timeout=0.1)
    log("after timeout: done", names(done), "pending", names(pending), "cancelled", slow.cancelled())
    done, pending = await asyncio.wait([slow, ts[0]], return_when=asyncio.FIRST_COMPLETED)
    log("first completed", names(done), "pending", names(pending))
    log("slow gives", await slow)
    done, pending = await asyncio.wait(ts, return_when=asyncio.FIRST_COMPLETED)
    log("all done already:", names(done), len(pending))


asyncio.run(main())
