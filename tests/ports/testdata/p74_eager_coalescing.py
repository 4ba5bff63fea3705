# Request coalescing with tasks started eagerly one by one
# (asyncio.Task(coro, eager_start=True), no task factory). A cache hit
# finishes inside the Task() call: the caller gets a done task, and the
# done callback it adds is scheduled (call_soon), not run. A miss registers
# itself as in flight during its eager step, so a request for the same key
# made right after joins it, awaiting the fetch's future through shield()
# so that a joiner cancelled later leaves the fetch alone. A request cancelled by its caller right after
# creation is already inside the backend. Last, tasks that cancel
# themselves in their eager step: one that then suspends gets the
# CancelledError at that await; one that returns without suspending ends
# cancelled anyway.
import asyncio

from probe import log, restart, d

inflight = {}
cache = {"a": 1}
calls = []


async def backend(key):
    calls.append(key)
    await asyncio.sleep(0.1 * len(key))
    return key.upper()


async def lookup(key):
    me = asyncio.current_task()
    log("lookup", key, "in", me.get_name(), "tasks", len(asyncio.all_tasks()))
    if key in cache:
        return cache[key]
    if key in inflight:
        owner, fut = inflight[key]
        log(me.get_name(), "joins", owner.get_name())
        return await asyncio.shield(fut)
    fut = asyncio.get_running_loop().create_future()
    inflight[key] = (me, fut)
    try:
        v = await backend(key)
    except BaseException:
        fut.cancel()
        raise
    finally:
        del inflight[key]
    cache[key] = v
    fut.set_result(v)
    return v


def report(t):
    if t.cancelled():
        log("callback", t.get_name(), "cancelled")
    else:
        log("callback", t.get_name(), t.result())


def request(loop, coro, name):
    t = asyncio.Task(coro, loop=loop, name=name, eager_start=True)
    t.add_done_callback(report)
    log("request", name, "returned, done", t.done())
    return t


async def give_up(key):
    me = asyncio.current_task()
    me.cancel("duplicate")
    log(me.get_name(), "cancelled itself, cancelling", me.cancelling())
    try:
        v = await lookup(key)
    except asyncio.CancelledError as e:
        log(me.get_name(), "cancelled at its await:", d(e), "inflight", sorted(inflight))
        raise
    log(me.get_name(), "got", v, "without suspending")
    return v


async def main():
    restart()
    loop = asyncio.get_running_loop()
    r1 = request(loop, lookup("a"), "r1")
    log("r1 result", r1.result())
    r2 = request(loop, lookup("bb"), "r2")
    r3 = request(loop, lookup("bb"), "r3")
    r5 = request(loop, lookup("bb"), "r5")
    log("inflight", sorted((k, o.get_name()) for k, (o, _) in inflight.items()))
    await asyncio.sleep(0.06)
    r5.cancel()
    r4 = request(loop, lookup("ccc"), "r4")
    r4.cancel("caller gave up")
    log("r4 cancelling", r4.cancelling(), "calls", calls)
    res = await asyncio.gather(r2, r3, r4, r5, return_exceptions=True)
    log("results", [d(r) for r in res])
    log("inflight", sorted(inflight), "cache", sorted(cache), "calls", calls)

    restart()
    u1 = request(loop, give_up("a"), "u1")
    log("u1 cancelled", u1.cancelled())
    u2 = request(loop, give_up("dddd"), "u2")
    log("u2 done", u2.done(), "calls", calls)
    try:
        await u2
    except asyncio.CancelledError as e:
        log("u2", d(e), "cancelled", u2.cancelled())
    log("cache", sorted(cache))


asyncio.run(main())
