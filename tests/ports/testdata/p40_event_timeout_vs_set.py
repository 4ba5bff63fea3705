# Event.wait under wait_for / timeout when set() lands in the same
# iteration as the deadline: set before the timeout fires still loses to
# it (the waiter had not resumed), set after it is too late, and a zero
# wait_for on a set event returns at once (EVENT-1, WAITFOR-1, WAITFOR-5).
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


async def waiter(ev, order):
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    if order == "set first":
        loop.call_soon(ev.set)
    try:
        async with asyncio.timeout(0):
            if order == "timeout first":
                loop.call_soon(ev.set)
            await ev.wait()
            log("  woke, set", ev.is_set())
    except TimeoutError:
        log("  timed out, set", ev.is_set(), "cancelling", me.cancelling(), state(ev))


async def main():
    restart()
    for order in ("set first", "timeout first"):
        ev = asyncio.Event()
        log(order)
        await asyncio.create_task(waiter(ev, order))
    ev = asyncio.Event()
    for st in ("unset", "set"):
        if st == "set":
            ev.set()
        try:
            log("wait_for 0", st, await asyncio.wait_for(ev.wait(), 0))
        except TimeoutError:
            log("wait_for 0", st, "timeout", state(ev))
    ev.clear()
    w = asyncio.create_task(asyncio.wait_for(ev.wait(), 10))
    await asyncio.sleep(0)
    ev.set()
    ev.clear()
    w.cancel("now")
    try:
        log("set+clear+cancel:", await w)
    except asyncio.CancelledError as e:
        log("set+clear+cancel:", d(e), "set", ev.is_set(), state(ev))


asyncio.run(main())
