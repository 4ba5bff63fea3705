# Two timeouts around a TaskGroup, plus the group's own abort, all cancel
# the same task around one iteration: a trigger task reschedules both
# deadlines to now after k yields while the group's child fails after one.
# Each scope uncancels only its own request, so the counts after each exit,
# and what escapes, are exact (CANCEL-7, CANCEL-8, TG-4, TMO-6).
import asyncio

from probe import d, log, restart


async def fail():
    await asyncio.sleep(0)
    raise ValueError("boom")


async def case(k):
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    scopes = []

    async def trigger():
        for _ in range(k):
            await asyncio.sleep(0)
        for s in scopes:
            try:
                s.reschedule(loop.time())
            except RuntimeError as e:
                log("  trigger", d(e))

    trig = asyncio.create_task(trigger())
    try:
        async with asyncio.timeout(None) as outer:
            scopes.append(outer)
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(fail())
                    async with asyncio.timeout(None) as inner:
                        scopes.append(inner)
                        await asyncio.sleep(1)
            except BaseException as e:
                log("  group", d(e), "inner expired", inner.expired(), "cancelling", me.cancelling())
                raise
    except BaseException as e:
        log("  outer", d(e), "expired", outer.expired(), "cancelling", me.cancelling())
    try:
        await asyncio.sleep(0)
        log("  next await fine, cancelling", me.cancelling())
    except asyncio.CancelledError as e:
        log("  next await", d(e), "cancelling", me.cancelling())
    await trig


async def main():
    restart()
    for k in range(5):
        log("deadlines after", k)
        await asyncio.create_task(case(k))


asyncio.run(main())
