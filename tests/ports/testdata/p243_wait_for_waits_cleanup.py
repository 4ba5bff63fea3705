# "The asyncio Timeout Trap: Why wait_for() Doesn't Stop Tasks Instantly
# and How to Fix It", https://runebook.dev/en/docs/python/library/asyncio-task/timeouts
# The page's gracefully_cancellable_task: cleanup on CancelledError. The
# surprise: wait_for's TimeoutError comes only after the cancelled task's
# cleanup ends, not at the timeout; and a task that swallows the
# cancellation makes wait_for return its value instead of timing out
# (3.12+); and since 3.12 runs the coroutine inside the caller, a
# cancellation of the caller during that cleanup cuts it short. Adapted: 3 s of work and 1 s timeout become 0.3 and 0.1 s,
# cleanup takes 0.2 s (the swallower's 0.08 s).
import asyncio

from probe import d, log, restart


async def gracefully_cancellable_task():
    log("Graceful task: Starting work...")
    try:
        await asyncio.sleep(0.3)
        log("Graceful task: Work finished successfully.")
        return "done"
    except asyncio.CancelledError:
        log("Graceful task: Cancellation detected! Starting cleanup...")
        await asyncio.sleep(0.2)
        log("Graceful task: Cleanup complete. Re-raising CancelledError.")
        raise


async def swallowing_task():
    try:
        await asyncio.sleep(0.3)
        return "finished"
    except asyncio.CancelledError:
        log("swallower: cancelled, returning a value instead")
        await asyncio.sleep(0.08)
        return "partial"


async def main():
    restart()
    try:
        await asyncio.wait_for(gracefully_cancellable_task(), timeout=0.1)
    except TimeoutError as e:
        log("Timeout occurred!", d(e), "cause", d(e.__cause__))
    restart()
    task = asyncio.create_task(gracefully_cancellable_task())
    try:
        async with asyncio.timeout(0.1):
            await task
    except TimeoutError:
        log("timeout() too waited for the cleanup; task cancelled:", task.cancelled())
    restart()
    try:
        r = await asyncio.wait_for(swallowing_task(), timeout=0.1)
        log("wait_for returned", r, "instead of raising")
    except TimeoutError:
        log("timed out")
    restart()

    async def caller():
        return await asyncio.wait_for(gracefully_cancellable_task(), timeout=0.1)

    c = asyncio.create_task(caller())
    await asyncio.sleep(0.17)
    c.cancel("outer")
    try:
        log("caller returned", await c)
    except asyncio.CancelledError as e:
        log("caller", d(e), "cancelled()", c.cancelled())


asyncio.run(main())
