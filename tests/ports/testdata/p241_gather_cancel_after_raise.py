# "How to cancel all remaining tasks in gather if one fails?",
# https://python.tutorialink.com/how-to-cancel-all-remaining-tasks-in-gather-if-one-fails/
# The asker cancels the gather's future after it raised and is surprised
# that the other sleepers go on: the outer future is already done, so
# cancel() is a no-op (returns False). The answer: cancel the children
# yourself. Adapted: seconds in tenths (2, 5, 7 -> 0.2, 0.5, 0.7), the
# sleepers as tasks so that the corrected version can cancel them; then
# the other side of the docs' sentence: cancelling a pending
# gather(return_exceptions=True) does cancel the children, and the
# gather ends with a CancelledError as its exception, not cancelled().
import asyncio

from probe import d, log, restart


class ErrorThatShouldCancelOtherTasks(Exception):
    pass


async def my_sleep(secs):
    await asyncio.sleep(secs)
    if secs == 0.5:
        raise ErrorThatShouldCancelOtherTasks("5 is forbidden!")
    log(f"Slept for {secs}secs.")


async def asker():
    sleepers = asyncio.gather(*[my_sleep(secs) for secs in [0.2, 0.5, 0.7]])
    try:
        await sleepers
    except ErrorThatShouldCancelOtherTasks as e:
        log("Fatal error; cancelling", d(e))
        log("sleepers.cancel() ->", sleepers.cancel(), "done", sleepers.done())
        await asyncio.sleep(0.5)


async def answer():
    tasks = [asyncio.create_task(my_sleep(secs)) for secs in [0.2, 0.5, 0.7]]
    try:
        await asyncio.gather(*tasks)
    except ErrorThatShouldCancelOtherTasks as e:
        log("Fatal error; cancelling the children", d(e))
        for t in tasks:
            log("cancel ->", t.cancel())
        res = await asyncio.gather(*tasks, return_exceptions=True)
        log("after", [d(r) for r in res])


async def pending_gather():
    g = asyncio.gather(*[my_sleep(secs) for secs in [0.2, 0.7]], return_exceptions=True)

    async def waiter():
        return await g

    t = asyncio.create_task(waiter())
    await asyncio.sleep(0.3)
    log("cancel the waiter ->", t.cancel())
    try:
        await t
    except asyncio.CancelledError as e:
        log("waiter", d(e), "gather cancelled()", g.cancelled(), "exception", d(g.exception()))


async def main():
    restart()
    await asker()
    restart()
    await answer()
    await asyncio.sleep(0.5)
    log("end")
    restart()
    await pending_gather()


asyncio.run(main())
