# TaskGroups in TaskGroups: the inner group's child fails (ValueError), its
# sibling turns its cancellation into TypeError; the inner group's
# ExceptionGroup fails the outer child, the outer group aborts: one sibling
# cleans up with an await before re-raising its cancellation, another
# converts it into KeyError, the body converts its own into RuntimeError.
# Then except* takes the group apart.
import asyncio

from probe import d, log, restart


async def fail_after(delay, exc):
    await asyncio.sleep(delay)
    log("raising", d(exc))
    raise exc


async def convert_cancel(exc):
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        log("converting cancel into", d(exc))
        raise exc


async def inner_group():
    async with asyncio.TaskGroup() as tg:
        tg.create_task(fail_after(0.1, ValueError("v1")))
        tg.create_task(convert_cancel(TypeError("t1")))


async def slow_cleanup():
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        await asyncio.sleep(0.1)
        log("slow cleanup done")
        raise


async def run():
    async with asyncio.TaskGroup() as tg:
        tg.create_task(inner_group())
        tg.create_task(slow_cleanup())
        tg.create_task(convert_cancel(KeyError("k")))
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            log("body converts its cancel")
            raise RuntimeError("body")


async def main():
    restart()
    try:
        await run()
    except BaseExceptionGroup as eg:
        log("whole:", d(eg))
    try:
        try:
            await run()
        except* ValueError as eg:
            log("except* ValueError:", d(eg))
        except* (KeyError, TypeError) as eg:
            log("except* KeyError|TypeError:", d(eg))
    except BaseExceptionGroup as eg:
        log("left over:", d(eg))
    log("cancelling", asyncio.current_task().cancelling())


asyncio.run(main())
