# "Cancel Is a Request, Not a Command",
# https://pete.lostsource.net/posts/2026-06-11-cancel-is-a-request.html
# The post's stubborn() catches CancelledError and carries on: cancel()
# "accomplishes nothing" and the task stays a zombie, while cancelling()
# keeps counting. Then the polite version that cleans up and returns
# (no re-raise): the task ends "successfully", not cancelled, and an
# asyncio.timeout() around such work never fires its TimeoutError.
# Adapted: sleeps of 0.1 s, the loop bounded to 5 rounds.
import asyncio

from probe import d, log, restart


async def stubborn():
    n = 0
    while n < 5:
        n += 1
        try:
            await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            log("cancelled? no thanks; cancelling()", asyncio.current_task().cancelling())
    return n


async def process_item(item):
    steps = 0
    while steps < 3:
        try:
            await asyncio.sleep(0.1)
            steps += 1
        except asyncio.CancelledError:
            log("cleanup of", item, "after", steps, "steps")
            await asyncio.sleep(0.05)
            return steps  # cleanup done, but no re-raise
    return steps


async def main():
    restart()
    t = asyncio.create_task(stubborn())
    await asyncio.sleep(0.17)
    log("cancel ->", t.cancel())
    await asyncio.sleep(0.06)
    log("cancel again ->", t.cancel(), "cancelling()", t.cancelling())
    r = await t
    log("stubborn returned", r, "cancelled()", t.cancelled(), "cancelling()", t.cancelling())

    restart()
    try:
        async with asyncio.timeout(0.17) as cm:
            r = await process_item("x")
        log("no TimeoutError: got", r, "expired", cm.expired())
    except TimeoutError:
        log("TimeoutError")
    log("after the timeout block, cancelling()", asyncio.current_task().cancelling())

    restart()
    inner = asyncio.create_task(process_item("y"))
    await asyncio.sleep(0.27)
    inner.cancel()
    r = await inner
    log("process_item returned", r, "cancelled()", inner.cancelled())


asyncio.run(main())
