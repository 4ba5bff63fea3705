# "Asyncio terminating all tasks when one of them throws exception",
# https://codemia.io/knowledge-hub/path/asyncio_terminating_all_tasks_when_one_of_them_throws_exception
# The answer: a TaskGroup cancels the siblings when one task fails and
# re-raises in an ExceptionGroup; before it, create the tasks, catch the
# first exception, cancel the rest and gather them with
# return_exceptions=True. Shown also: a sibling whose cleanup raises
# joins the group (gh-95704), and the group's body is cancelled at its
# next await. Adapted: tasks a (0.3 s), b (fails at 0.1 s), c (0.5 s,
# cleanup raises), times in tenths.
import asyncio

from probe import d, log, restart


async def a():
    try:
        await asyncio.sleep(0.3)
        log("a done")
    except asyncio.CancelledError:
        log("a cancelled")
        raise


async def b():
    await asyncio.sleep(0.1)
    log("b fails")
    raise ValueError("b failed")


async def c():
    try:
        await asyncio.sleep(0.5)
    except asyncio.CancelledError:
        log("c cleanup")
        await asyncio.sleep(0.04)
        raise KeyError("c cleanup failed")


async def main():
    restart()
    try:
        async with asyncio.TaskGroup() as tg:
            ta = tg.create_task(a())
            tg.create_task(b())
            tc = tg.create_task(c())
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                log("group body cancelled")
                raise
    except* ValueError as eg:
        log("caught", d(eg))
    except* KeyError as eg:
        log("also", d(eg))
    log("a cancelled()", ta.cancelled(), "c exception", d(tc.exception()))

    restart()
    tasks = [asyncio.create_task(f()) for f in (a, b)]
    try:
        await asyncio.gather(*tasks)
    except ValueError as e:
        log("first failure", d(e))
        for t in tasks:
            t.cancel()
        res = await asyncio.gather(*tasks, return_exceptions=True)
        log("outcomes", [d(r) for r in res])


asyncio.run(main())
