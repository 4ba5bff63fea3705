# A record importer whose task absorbs a cancellation to finish the
# record in progress. Two cancel() calls before it resumes deliver one
# CancelledError (the first message) and count 2; it finishes the record,
# uncancel()s each request and returns normally. A cancel() arriving
# during that cleanup await interrupts it with its own message and the
# task ends cancelled. A worker that ignores a cancellation without
# uncancel() keeps cancelling() at 1, yet a later timeout() still raises
# TimeoutError and a later TaskGroup whose child fails still raises its
# ExceptionGroup; the group, seeing the task was being cancelled from
# outside, cancels it again as it raises (3.13: the count stays 1 and the
# next await raises CancelledError).
import asyncio

from probe import d, log, restart


async def importer(name, records, saved):
    t = asyncio.current_task()
    i = 0
    while i < len(records):
        try:
            await asyncio.sleep(0.1)
            saved.append(f"{name}:{records[i]}")
            i += 1
        except asyncio.CancelledError as e:
            log(name, "cancel requested", d(e), "cancelling", t.cancelling())
            try:
                await asyncio.sleep(0.05)
                saved.append(f"{name}:{records[i]}*")
                log(name, "finished", records[i])
            except asyncio.CancelledError as e2:
                log(name, "cleanup interrupted", d(e2), "cancelling", t.cancelling())
                raise
            n = t.cancelling()
            while t.uncancel():
                pass
            log(name, "absorbed", n, "now", t.cancelling())
            return i + 1
    return i


async def fail_soon():
    await asyncio.sleep(0.06)
    raise ValueError("bad row")


async def stubborn():
    t = asyncio.current_task()
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError as e:
        log("stubborn ignores", d(e), "cancelling", t.cancelling())
    try:
        async with asyncio.timeout(0.1):
            await asyncio.sleep(1)
    except TimeoutError:
        log("stubborn timed out, cancelling", t.cancelling())
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(fail_soon())
            await asyncio.sleep(1)
    except ExceptionGroup as eg:
        log("stubborn group failed", d(eg), "cancelling", t.cancelling())
    try:
        await asyncio.sleep(0.01)
    except asyncio.CancelledError as e:
        log("stubborn re-cancelled after the group", d(e), "cancelling", t.cancelling())
    return "stubborn done"


async def main():
    restart()
    saved = []
    a = asyncio.create_task(importer("a", list("pqrst"), saved))
    await asyncio.sleep(0.26)
    log("main cancels a twice:", a.cancel("stop-1"), a.cancel("stop-2"), "cancelling", a.cancelling())
    log("a returned", await a, "cancelled", a.cancelled(), "saved", saved)

    restart()
    saved.clear()
    b = asyncio.create_task(importer("b", list("xyz"), saved))
    await asyncio.sleep(0.16)
    b.cancel("stop-b1")
    await asyncio.sleep(0.03)
    log("main cancels b during cleanup")
    b.cancel("stop-b2")
    try:
        await b
    except asyncio.CancelledError as e:
        log("b ended", d(e), "cancelling", b.cancelling(), "saved", saved)

    restart()
    s = asyncio.create_task(stubborn())
    await asyncio.sleep(0.1)
    s.cancel("go away")
    log("stubborn returned", await s, "cancelling", s.cancelling(), "cancelled", s.cancelled())


asyncio.run(main())
