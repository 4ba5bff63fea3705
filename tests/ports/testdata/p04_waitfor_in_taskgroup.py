# wait_for inside TaskGroup children; the task running the group is
# cancelled from outside with a message. Child a finishes, child b times
# out, child c (wait_for on a coroutine) and child d (wait_for on a
# separate task) are cancelled by the group's abort. Handlers that run in
# the same iteration record into `seen` (CPython orders them by a set).
# Then wait_for with a zero timeout: a coroutine is never started, a done
# task gives its result, a task that swallows the cancellation gives its
# value, a task that does not gives TimeoutError. Last, the task in
# wait_for(coro, 5) is cancelled from outside and the coroutine swallows
# it: wait_for returns the value and the request stays counted.
import asyncio

from probe import d, log, restart


seen = []


async def slow(name, delay):
    try:
        await asyncio.sleep(delay)
        return name + "!"
    except asyncio.CancelledError as e:
        seen.append(f"slow {name} cancelled {d(e)}")
        raise


async def child(name, delay, to):
    try:
        r = await asyncio.wait_for(slow(name, delay), to)
        log("child", name, "result", r)
    except TimeoutError:
        log("child", name, "timed out, cancelling", asyncio.current_task().cancelling())
    except asyncio.CancelledError as e:
        seen.append(f"child {name} cancelled {d(e)}")
        raise


async def child_on_task(name, inner):
    try:
        r = await asyncio.wait_for(inner, 2.0)
        log("child", name, "result", r)
    except asyncio.CancelledError as e:
        seen.append(f"child {name} cancelled {d(e)}")
        raise


async def runner():
    me = asyncio.current_task()
    inner = asyncio.create_task(slow("d-inner", 1.5))
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(child("a", 0.1, 1.0))
            tg.create_task(child("b", 0.5, 0.2))
            tg.create_task(child("c", 1.0, 2.0))
            tg.create_task(child_on_task("d", inner))
    except asyncio.CancelledError as e:
        await asyncio.sleep(0)  # let the inner task see its cancellation
        log("runner cancelled", d(e), "cancelling", me.cancelling(),
            "inner cancelled", inner.cancelled())
        raise


async def main():
    restart()
    r = asyncio.create_task(runner())
    await asyncio.sleep(0.3)
    log("main cancels runner")
    r.cancel("shutdown")
    try:
        await r
    except asyncio.CancelledError as e:
        log("main saw", d(e), "runner cancelled", r.cancelled())
    for s in sorted(seen):
        log(" ", s)

    restart()
    started = []

    async def never():
        started.append("started")
        return "x"

    try:
        await asyncio.wait_for(never(), 0)
    except TimeoutError as e:
        log("wait_for(coro, 0) timed out, cause", d(e.__cause__), "started", started)

    async def quick():
        return "quick"

    async def swallower():
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)
            return "kept"

    async def plain():
        await asyncio.sleep(1)

    q = asyncio.create_task(quick())
    sw = asyncio.create_task(swallower())
    pl = asyncio.create_task(plain())
    await asyncio.sleep(0)
    log("done task:", await asyncio.wait_for(q, 0))
    log("swallower:", await asyncio.wait_for(sw, -1))
    try:
        await asyncio.wait_for(pl, 0)
    except TimeoutError as e:
        log("plain task timed out, cause", d(e.__cause__), "cancelled", pl.cancelled())

    restart()

    async def swallow():
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            return "swallowed"

    async def caller():
        r = await asyncio.wait_for(swallow(), 5)
        log("wait_for returned", r, "cancelling", asyncio.current_task().cancelling())
        await asyncio.sleep(0)
        log("next await fine")
        return r

    ct = asyncio.create_task(caller())
    await asyncio.sleep(0.1)
    ct.cancel("outer")
    log("caller gave", await ct)


asyncio.run(main())
