# A TaskGroup child fails while its parent task is cancelled from outside:
# main cancels the parent after k yields, k sweeping the iterations in which
# the child starts, fails, and its done callback aborts the group (TG-3,
# TG-4 steps 6 and 9: an outside cancel that arrives with the failure stays
# armed for the parent's next await).
import asyncio

from probe import d, log, restart


async def parent():
    me = asyncio.current_task()

    async def fail():
        await asyncio.sleep(0)
        raise ValueError("boom")

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(fail())
            await asyncio.sleep(1)
    except BaseException as e:
        log("  group raised", d(e), "cancelling", me.cancelling())
        if isinstance(e, asyncio.CancelledError):
            raise
    try:
        await asyncio.sleep(0)
        log("  next await fine")
    except asyncio.CancelledError as e:
        log("  next await", d(e), "cancelling", me.cancelling())
        raise
    return "done"


async def main():
    restart()
    for k in range(6):
        t = asyncio.create_task(parent())
        for _ in range(k):
            await asyncio.sleep(0)
        log("k", k, "cancel ->", t.cancel("ext"), "done", t.done())
        try:
            log("  result", await t)
        except asyncio.CancelledError as e:
            log("  cancelled", d(e), "cancelling", t.cancelling())


asyncio.run(main())
