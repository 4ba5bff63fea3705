# A cooperative crawler shares the loop fairly: three workers each do a
# slice of CPU work then sleep(0), and the order they run in is the
# ready queue's round-robin. Callbacks scheduled with call_soon from a
# worker run between the workers' steps in the order they were queued;
# a future resolved by a callback wakes its waiter one iteration later,
# after callbacks queued before it; an Event set wakes its waiters in
# the order they began to wait; a task created mid-round joins at the
# back of the queue; call_later(0) runs after the callbacks already
# queued.
import asyncio

from probe import log, restart

order = []


async def worker(name, steps):
    for i in range(steps):
        order.append(f"{name}{i}")
        if name == "b" and i == 1:
            loop = asyncio.get_running_loop()
            loop.call_soon(order.append, "cb1")
            loop.call_soon(order.append, "cb2")
            asyncio.create_task(late())
        await asyncio.sleep(0)
    order.append(f"{name}-end")


async def late():
    order.append("late0")
    await asyncio.sleep(0)
    order.append("late1")


async def waiter(name, ev):
    await ev.wait()
    order.append(f"woke-{name}")


async def main():
    loop = asyncio.get_running_loop()
    restart()
    await asyncio.gather(worker("a", 3), worker("b", 3), worker("c", 2))
    log("round robin", order)

    order.clear()
    fut = loop.create_future()

    async def resolve_waiter():
        v = await fut
        order.append(f"fut-{v}")

    w = asyncio.create_task(resolve_waiter())
    await asyncio.sleep(0)
    loop.call_soon(order.append, "before")
    loop.call_soon(fut.set_result, 1)
    loop.call_soon(order.append, "after")
    loop.call_later(0, order.append, "later0")
    loop.call_soon(order.append, "after2")
    await w
    log("future wakeup", order)

    order.clear()
    ev = asyncio.Event()
    ws = [asyncio.create_task(waiter(n, ev)) for n in ("x", "y", "z")]
    await asyncio.sleep(0)
    ws.append(asyncio.create_task(waiter("w", ev)))
    loop.call_soon(order.append, "cb-before-set")
    ev.set()
    order.append("set")
    loop.call_soon(order.append, "cb-after-set")
    await asyncio.gather(*ws)
    log("event wakeup", order)

    order.clear()
    handles = []
    for i, delay in enumerate((0.3, 0.1, 0.2, 0.05, 0.25)):
        handles.append(loop.call_later(delay, order.append, f"t{i}"))
    loop.call_later(0.12, lambda: (handles[2].cancel(), order.append("cancel-t2")))
    loop.call_later(0.07, lambda: (handles[0].cancel(), order.append("cancel-t0")))
    await asyncio.sleep(0.4)
    log("timers", order, [h.cancelled() for h in handles])


asyncio.run(main())
