# "What is the right way to await cancelling an asyncio task?",
# https://stackoverflow.com/questions/78752124 (via
# https://coderapp.vercel.app/answer/78752124)
# The asker's `foo_task.cancel(); try: await foo_task except
# CancelledError: pass` also swallows a cancellation of the awaiting task
# itself, which is what the docs warn about. Shown: a closer cancelled
# while it awaits foo_task's slow cleanup carries on as if nothing
# happened; the safer version checks current_task().cancelling() and
# re-raises. A second surprise: cancelling the closer while it awaits
# foo_task cancels foo_task again, cutting its cleanup short. Adapted: foo's cleanup takes 0.2 s, the closer is cancelled
# at 0.1 s.
import asyncio

from probe import d, log, restart


async def foo():
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        log("foo cleaning up")
        await asyncio.sleep(0.2)
        log("foo cleaned up")
        raise


async def closer_naive(foo_task):
    foo_task.cancel()
    try:
        await foo_task
    except asyncio.CancelledError:
        pass
    log("naive closer carries on; cancelling()", asyncio.current_task().cancelling())
    await asyncio.sleep(0.1)
    log("naive closer finished normally")


async def closer_safe(foo_task):
    foo_task.cancel()
    try:
        await foo_task
    except asyncio.CancelledError:
        if asyncio.current_task().cancelling():
            log("safe closer was itself cancelled: re-raise")
            raise
    log("safe closer finished normally")


async def main():
    for closer in (closer_naive, closer_safe):
        restart()
        foo_task = asyncio.create_task(foo())
        await asyncio.sleep(0)
        c = asyncio.create_task(closer(foo_task))
        await asyncio.sleep(0.1)
        log("main cancels the closer")
        c.cancel()
        try:
            await c
            log("closer returned; cancelled()", c.cancelled())
        except asyncio.CancelledError:
            log("closer cancelled()", c.cancelled())
        log("foo_task cancelled()", foo_task.cancelled(), "done()", foo_task.done())
        await asyncio.sleep(0.2)
        log("foo_task cancelled()", foo_task.cancelled())


asyncio.run(main())
