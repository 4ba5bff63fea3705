# Consumers wait on a Condition with wait_for(predicate). The first one is
# notified and then cancelled before it runs: 3.13 re-acquires the lock,
# passes its notification on to the next waiter, and raises. A consumer
# with a deadline (wait_for(cond.wait_for(...), 0.3)) times out holding
# nothing afterwards. Last, a notified waiter queued on the lock is
# cancelled twice while re-acquiring it: it keeps trying, and once it
# holds the lock it raises the most recent CancelledError ("m2").
import asyncio

from probe import log, restart


async def main():
    restart()
    cond = asyncio.Condition()
    items = []

    async def consumer(name):
        async with cond:
            try:
                await cond.wait_for(lambda: items)
            except asyncio.CancelledError:
                log(name, "cancelled; lock held", cond.locked())
                raise
            item = items.pop(0)
            log(name, "got", item)

    async def impatient():
        try:
            async with cond:
                await asyncio.wait_for(cond.wait_for(lambda: "z" in items), 0.3)
        except TimeoutError:
            log("impatient timed out; lock held", cond.locked())

    cs = [asyncio.create_task(consumer(f"c{i}")) for i in range(3)]
    imp = asyncio.create_task(impatient())
    await asyncio.sleep(0)
    async with cond:
        items.append("x")
        cond.notify(1)
        cs[0].cancel()
        log("notified one and cancelled c0")
    await asyncio.sleep(0.1)
    log("items left", items, "c0 cancelled", cs[0].cancelled())
    async with cond:
        items.append("y")
        cond.notify_all()
        log("notify_all")
    await asyncio.sleep(0.1)
    log("items left", items)
    await imp
    async with cond:
        items.append("w")
        cond.notify()
    await asyncio.gather(*cs, return_exceptions=True)
    log("done, items", items, "locked", cond.locked())

    async def reacquirer():
        me = asyncio.current_task()
        async with cond:
            try:
                await cond.wait()
                log("reacquirer woke (unexpected)")
            except asyncio.CancelledError as e:
                log("reacquirer raises", f"Cancelled({e.args[0] if e.args else ''})",
                    "lock held", cond.locked(), "cancelling", me.cancelling())
                raise

    r = asyncio.create_task(reacquirer())
    await asyncio.sleep(0)
    async with cond:
        cond.notify()
        await asyncio.sleep(0)
        r.cancel("m1")
        await asyncio.sleep(0.1)
        r.cancel("m2")
        await asyncio.sleep(0.1)
        log("main releases the lock")
    try:
        await r
    except asyncio.CancelledError as e:
        log("main saw", f"Cancelled({e.args[0] if e.args else ''})")


asyncio.run(main())
