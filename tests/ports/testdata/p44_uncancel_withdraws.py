# uncancel() racing a pending cancellation (CANCEL-7, 3.13 gh-116720): a
# cancel undone before the task runs is a no-op, one undone partly is still
# delivered, and a timeout entered afterwards sees the right baseline.
import asyncio

from probe import d, log, restart


async def sleeper(name):
    me = asyncio.current_task()
    try:
        await asyncio.sleep(0)
        log(" ", name, "first await fine, cancelling", me.cancelling())
        async with asyncio.timeout(0):
            await asyncio.sleep(1)
    except BaseException as e:
        log(" ", name, "raised", d(e), "cancelling", me.cancelling())
        raise
    return name


async def main():
    restart()
    for n_cancel, n_uncancel, run_first in ((1, 1, False), (2, 1, False), (1, 1, True), (2, 2, True), (1, 2, True)):
        t = asyncio.create_task(sleeper(f"c{n_cancel}u{n_uncancel}{'r' if run_first else ''}"))
        if run_first:
            await asyncio.sleep(0)
        for i in range(n_cancel):
            t.cancel(f"m{i}")
        counts = [t.uncancel() for _ in range(n_uncancel)]
        log("cancel", n_cancel, "uncancel", counts)
        r = await asyncio.gather(t, return_exceptions=True)
        log("  ->", d(r[0]) if isinstance(r[0], BaseException) else r[0], "cancelling", t.cancelling())


asyncio.run(main())
