# The task awaiting a gather is cancelled in the iteration a child fails:
# before the failure reaches the gather, after it (the outer is done, so
# the cancel lands on the awaiting task itself and replaces the error), and
# the other children keep running or are cancelled (GATHER-3, GATHER-6,
# CANCEL-4).
import asyncio

from probe import d, log, restart


async def child(name, n, fail):
    try:
        for _ in range(n):
            await asyncio.sleep(0)
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e))
        raise
    if fail:
        raise ValueError(name)
    return name


async def awaiter(g):
    me = asyncio.current_task()
    try:
        log("  got", await g)
    except BaseException as e:
        log("  awaiter", d(e), "cancelling", me.cancelling(), "g.done", g.done())
        raise


async def main():
    restart()
    for k in range(5):
        a = asyncio.create_task(child("a", 1, True))
        b = asyncio.create_task(child("b", 4, False))
        g = asyncio.gather(a, b)
        w = asyncio.create_task(awaiter(g))
        for _ in range(k):
            await asyncio.sleep(0)
        log("k", k, "a done", a.done(), "g done", g.done(), "cancel awaiter ->", w.cancel("w"))
        r = await asyncio.gather(w, return_exceptions=True)
        await asyncio.gather(a, b, return_exceptions=True)
        await asyncio.sleep(0)
        g.exception()
        log("  w", d(r[0]), "b", "C" if b.cancelled() else b.result())


asyncio.run(main())
