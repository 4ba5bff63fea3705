# Uncancel patterns: (A) a home-made deadline scope (call_later(cancel) +
# uncancel(), as CPython's timeouts do) around work that finishes, around
# work that overruns, and with an outside cancel arriving first; (B) a task
# cancelled twice before it runs sees one CancelledError with
# cancelling()==2, uncancels once and keeps going with 1 left: a timeout
# entered then still reports its own expiry (TMO-8j), and a TaskGroup whose
# child fails re-arms the leftover cancellation (TG-4 step 9) so the next
# await raises it; (C) a child cancels the group's parent task directly:
# the group cancels the other children and propagates that cancellation.
import asyncio

from probe import d, log, restart


class Deadline(Exception):
    pass


async def within(delay, work):
    me = asyncio.current_task()
    loop = asyncio.get_running_loop()
    fired = False

    def fire():
        nonlocal fired
        fired = True
        me.cancel()

    h = loop.call_later(delay, fire)
    try:
        return await work
    except asyncio.CancelledError:
        if fired and me.uncancel() == 0:
            raise Deadline(f"after {delay}") from None
        raise
    finally:
        h.cancel()


async def job(delay):
    await asyncio.sleep(delay)
    return f"slept {delay}"


async def part_a():
    me = asyncio.current_task()
    log("A1", await within(0.2, job(0.1)), "cancelling", me.cancelling())
    try:
        await within(0.1, job(0.3))
    except Deadline as e:
        log("A2 deadline", d(e), "cancelling", me.cancelling())


async def a3():
    me = asyncio.current_task()
    try:
        await within(0.3, job(1))
    except asyncio.CancelledError as e:
        log("A3 outside cancel passes", d(e), "cancelling", me.cancelling())
        raise


async def part_b():
    me = asyncio.current_task()
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError as e:
        log("B got", d(e), "cancelling", me.cancelling())
    log("B uncancel ->", me.uncancel())
    await asyncio.sleep(0)
    log("B next await fine, cancelling", me.cancelling())
    try:
        async with asyncio.timeout(0.1):
            await asyncio.sleep(1)
    except TimeoutError:
        log("B timeout still converts, cancelling", me.cancelling())

    async def fail():
        await asyncio.sleep(0.1)
        raise ValueError("child")

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(fail())
    except* ValueError as eg:
        log("B group", d(eg), "cancelling", me.cancelling())
    try:
        await asyncio.sleep(0)
        log("B not cancelled again (unexpected)")
    except asyncio.CancelledError as e:
        log("B re-armed cancel", d(e), "cancelling", me.cancelling())
    log("B uncancel ->", me.uncancel())
    return "b-done"


async def main():
    restart()
    await part_a()
    restart()
    t = asyncio.create_task(a3())
    await asyncio.sleep(0.1)
    t.cancel("outside")
    try:
        await t
    except asyncio.CancelledError as e:
        log("A3 main saw", d(e))
    restart()
    t = asyncio.create_task(part_b())
    await asyncio.sleep(0)
    log("cancel 1:", t.cancel("first"), "cancel 2:", t.cancel("second"))
    log("B returned", await t)

    restart()
    me = asyncio.current_task()

    async def rogue():
        await asyncio.sleep(0.1)
        me.cancel("rogue")
        await asyncio.sleep(1)

    async def plain():
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError as e:
            log("C plain child cancelled", d(e))
            raise

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(rogue())
            tg.create_task(plain())
            await asyncio.sleep(1)
    except asyncio.CancelledError as e:
        log("C group raised", d(e), "cancelling", me.cancelling())
        log("C uncancel ->", me.uncancel())


asyncio.run(main())
