# shield() of a task that is itself cancelled directly, of one that finishes
# before the outer future is awaited, and a waiter cancelled in the same
# iteration as the inner task finishes (SHIELD-1..3, CANCEL-4).
import asyncio

from probe import d, log, restart


async def work(n, result):
    for _ in range(n):
        await asyncio.sleep(0)
    if isinstance(result, BaseException):
        raise result
    return result


async def waiter(outer, name):
    me = asyncio.current_task()
    try:
        log(" ", name, "got", await outer)
    except BaseException as e:
        log(" ", name, "raised", d(e), "cancelling", me.cancelling())


async def main():
    restart()
    inner = asyncio.create_task(work(3, "inner value"))
    outer = asyncio.shield(inner)
    w = asyncio.create_task(waiter(outer, "w1"))
    await asyncio.sleep(0)
    log("cancel inner ->", inner.cancel("direct"))
    await w
    log("outer cancelled", outer.cancelled(), "inner cancelled", inner.cancelled())

    inner = asyncio.create_task(work(1, ValueError("late")))
    outer = asyncio.shield(inner)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    log("inner done", inner.done(), "outer done", outer.done())
    await waiter(outer, "w2")
    log("shield of done is same", asyncio.shield(inner) is inner)

    for k in range(4):
        inner = asyncio.create_task(work(2, f"v{k}"))
        w = asyncio.create_task(waiter(asyncio.shield(inner), f"w3.{k}"))
        for _ in range(k + 1):
            await asyncio.sleep(0)
        log("k", k, "inner done", inner.done(), "cancel waiter ->", w.cancel("stop"))
        await w
        log("  inner", await inner)


asyncio.run(main())
