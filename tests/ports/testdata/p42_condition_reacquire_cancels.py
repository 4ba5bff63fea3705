# Condition.wait cancelled again and again while it waits to re-acquire a
# contended lock: it keeps retrying, returns holding the lock, and raises
# the most recent CancelledError instance (COND-2, 3.13); wait_for stops
# at the first error.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    cond = asyncio.Condition()

    async def waiter(name):
        me = asyncio.current_task()
        async with cond:
            try:
                await cond.wait_for(lambda: False)
            except asyncio.CancelledError as e:
                log(" ", name, "raised", d(e), "locked", cond.locked(), "cancelling", me.cancelling())
                raise

    w = asyncio.create_task(waiter("w"))
    v = asyncio.create_task(waiter("v"))
    await asyncio.sleep(0)
    await cond.acquire()
    cond.notify_all()
    await asyncio.sleep(0)
    for msg in ("first", "second", "third"):
        log("cancel", msg, "->", w.cancel(msg), "v.cancel ->", v.cancel(msg + "-v"))
        await asyncio.sleep(0)
    log("still holding, w done", w.done(), "cancelling", w.cancelling())
    cond.release()
    await asyncio.gather(w, v, return_exceptions=True)
    log("after", "locked", cond.locked(), "w", d(w.exception()) if not w.cancelled() else "C")


asyncio.run(main())
