# "`asyncio.timeout(0)` swallows a prior task cancellation",
# https://github.com/python/cpython/issues/134471
# The test(): the task cancels itself, then enters
# asyncio.timeout(timeout). With timeout=0 the Timeout takes the pending
# cancellation for its own and raises TimeoutError, and the task goes on
# ("not cancelled"); with a positive timeout the CancelledError passes.
# Adapted: the sleeps are 0.1 and 0.2 s, each variant in its own task,
# and a third variant with a deadline already in the past (timeout_at).
import asyncio

from probe import d, log, restart


async def test(make_cm):
    task = asyncio.current_task()
    task.cancel()

    try:
        async with make_cm():
            await asyncio.sleep(0.1)
    except TimeoutError:
        log("timeout caught; cancelling()", task.cancelling())
    except asyncio.CancelledError:
        log("CancelledError caught; cancelling()", task.cancelling())
        raise

    await asyncio.sleep(0.2)
    log("not cancelled")


async def main():
    loop = asyncio.get_running_loop()
    variants = [
        ("timeout(0)", lambda: asyncio.timeout(0)),
        ("timeout(0.001)", lambda: asyncio.timeout(0.001)),
        ("timeout_at(past)", lambda: asyncio.timeout_at(loop.time() - 1)),
        ("timeout(None)", lambda: asyncio.timeout(None)),
    ]
    for name, make_cm in variants:
        restart()
        log(name)
        t = asyncio.create_task(test(make_cm))
        try:
            await t
            log(name, "task ended normally")
        except asyncio.CancelledError:
            log(name, "task cancelled()", t.cancelled())


asyncio.run(main())
