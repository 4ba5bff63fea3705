# A TaskGroup child fails while its siblings hold a Lock, sit inside a
# Timeout, wait for the Lock, and await a Shield. The siblings' cancellation
# handlers run in one iteration in an order CPython does not fix (the group
# keeps its tasks in a set), so they record into `seen`, printed sorted.
# Then: a child may start a sibling while the group's exit waits, not after
# the group finished, nor while it aborts (the errors name the group's
# repr). Last, with eager_task_factory, a child that fails in its eager
# step: 3.13.0 handles it inside create_task (the group aborts at once and
# refuses the next child); 3.13.2+ (gh-128550) goes through the done
# callback, as the Go port does (docs/rules.md TG-5, TASK-10).
import asyncio

from probe import d, log, restart


async def main():
    restart()
    lock = asyncio.Lock()
    seen = []
    me = asyncio.current_task()

    async def holder():
        async with lock:
            log("holder acquired")
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError as e:
                seen.append(f"holder cancelled {d(e)} still locked={lock.locked()}")
                raise

    async def waiter():
        await asyncio.sleep(0)
        log("waiter wants lock, locked", lock.locked())
        try:
            async with lock:
                seen.append("waiter acquired")
        except asyncio.CancelledError as e:
            seen.append(f"waiter cancelled {d(e)}")
            raise

    scope = None

    async def timed():
        nonlocal scope
        try:
            async with asyncio.timeout(0.5) as scope:
                await asyncio.sleep(1)
        except asyncio.CancelledError as e:
            seen.append(f"timed cancelled {d(e)} expired={scope.expired()}")
            raise

    async def inner_work():
        await asyncio.sleep(0.3)
        log("inner finished")
        return "inner-result"

    inner = asyncio.create_task(inner_work())

    async def shielded():
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError as e:
            seen.append(f"shielded cancelled {d(e)} inner done={inner.done()}")
            raise

    async def failer():
        await asyncio.sleep(0.1)
        log("failer raising")
        raise ValueError("boom")

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(holder())
            tg.create_task(waiter())
            tg.create_task(timed())
            tg.create_task(shielded())
            tg.create_task(failer())
            try:
                await asyncio.sleep(2)
            except asyncio.CancelledError as e:
                log("body cancelled", d(e), "cancelling", me.cancelling())
                raise
    except BaseExceptionGroup as eg:
        log("group", d(eg))
    for s in sorted(seen):
        log(" ", s)
    log("after group: cancelling", me.cancelling(), "locked", lock.locked(),
        "inner done", inner.done())
    r = await inner
    log("inner result", r)
    await asyncio.sleep(0)
    log("main still runs, cancelling", me.cancelling())

    restart()

    async def sibling():
        await asyncio.sleep(0.1)
        log("sibling done")

    async def late_spawner(tg):
        await asyncio.sleep(0.1)
        tg.create_task(sibling())
        log("spawned a sibling while exiting:", repr(tg))

    async with asyncio.TaskGroup() as tg2:
        tg2.create_task(late_spawner(tg2))
    log("tg2 done", repr(tg2))
    try:
        tg2.create_task(sibling())
    except RuntimeError as e:
        log("after exit:", e)

    async def fail_soon():
        await asyncio.sleep(0.1)
        raise ValueError("x")

    async def spawn_on_cancel(tg):
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            try:
                tg.create_task(sibling())
            except RuntimeError as e:
                log("while aborting:", e)
            raise

    try:
        async with asyncio.TaskGroup() as tg3:
            tg3.create_task(spawn_on_cancel(tg3))
            tg3.create_task(fail_soon())
    except ExceptionGroup as eg:
        log("tg3", d(eg), repr(tg3))

    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)

    async def fails_now():
        log("fails_now raising")
        raise ValueError("eager")

    async def slow():
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            log("slow cancelled")
            raise

    try:
        async with asyncio.TaskGroup() as tg4:
            tg4.create_task(slow())
            tg4.create_task(fails_now())
            log("after eager failure:", repr(tg4), "cancelling", me.cancelling())
            try:
                tg4.create_task(sibling())
                log("next spawn allowed")
            except RuntimeError as e:
                log("next spawn refused:", e)
            await asyncio.sleep(0)
            log("body not cancelled (unexpected)")
    except* ValueError as eg:
        log("tg4", d(eg), "cancelling", me.cancelling())
    loop.set_task_factory(None)


asyncio.run(main())
