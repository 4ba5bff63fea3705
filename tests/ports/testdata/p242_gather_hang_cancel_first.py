# "Why does asyncio.gather sometimes hang indefinitely when one of the
# tasks raises?", https://stackoverflow.com/questions/79805061 (via
# https://legalnegry.net/stackoverflow.com/questions/79805061/why-does-asyncio-gather-sometimes-hang-indefinitely-when-one-of-the-tasks-rais)
# The answer's fix: on the first failure cancel the other task and await
# it, then re-raise. Its surprise: `await one` on the task just cancelled
# raises CancelledError, so `raise err` is never reached and main ends
# cancelled, not with the RuntimeError. Adapted: 1 and 2 s become 0.1
# and 0.27 s; main's body runs in a task so the outcome can be printed;
# then the corrected version (suppress the CancelledError of `one`).
import asyncio

from probe import d, log, restart


async def taskA():
    try:
        while True:
            log("A running")
            await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        log("A cancelled")
        raise


async def taskB():
    await asyncio.sleep(0.27)
    raise RuntimeError("Failure in B")


async def answer_main():
    one = asyncio.create_task(taskA())
    two = asyncio.create_task(taskB())
    try:
        await asyncio.gather(one, two)
    except Exception as err:
        one.cancel()
        await one
        raise err


async def fixed_main():
    one = asyncio.create_task(taskA())
    two = asyncio.create_task(taskB())
    try:
        await asyncio.gather(one, two)
    except Exception as err:
        one.cancel()
        try:
            await one
        except asyncio.CancelledError:
            log("one is cancelled:", one.cancelled(), "cancelling() of main", asyncio.current_task().cancelling())
        raise err


async def main():
    restart()
    t = asyncio.create_task(answer_main())
    try:
        await t
    except BaseException as e:
        log("answer's main ended with", d(e), "cancelled()", t.cancelled())
    restart()
    t = asyncio.create_task(fixed_main())
    try:
        await t
    except BaseException as e:
        log("fixed main ended with", d(e), "cancelled()", t.cancelled())


asyncio.run(main())
