# An event-sourced order state machine: events are applied under one lock
# shared by two Conditions (state changes and stock changes), waiters use
# wait_for with predicates over the state, notify(1) wakes one stock
# waiter at a time while notify_all wakes every state waiter, a predicate
# that raises propagates out of wait_for with the lock held, a waiter that
# gives up on asyncio.wait_for leaves the condition clean, and a waiter
# cancelled while the lock is held elsewhere re-acquires it before it
# sees the cancellation.
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


lock = asyncio.Lock()
state_changed = asyncio.Condition(lock)
stock_changed = asyncio.Condition(lock)
order = {"state": "new", "history": []}
stock = {"n": 0}


async def apply(event, state=None, stock_delta=0):
    async with lock:
        order["history"].append(event)
        if state is not None:
            order["state"] = state
            state_changed.notify_all()
        if stock_delta:
            stock["n"] += stock_delta
            stock_changed.notify(stock_delta)
        log("event", event, "->", order["state"], "stock", stock["n"])


async def await_state(name, *states):
    async with state_changed:
        await state_changed.wait_for(lambda: order["state"] in states)
        log(name, "saw", order["state"], "locked", lock.locked())
        return order["state"]


async def picker(name):
    async with stock_changed:
        await stock_changed.wait_for(lambda: stock["n"] > 0)
        stock["n"] -= 1
        log(name, "picked one, left", stock["n"])


def strict():
    if order["state"] == "cancelled":
        raise ValueError("order was cancelled")
    return order["state"] == "shipped"


async def main():
    restart()
    waiters = [
        asyncio.create_task(await_state("billing", "paid")),
        asyncio.create_task(await_state("shipping", "packed", "shipped")),
        asyncio.create_task(await_state("audit", "shipped")),
    ]
    pickers = [asyncio.create_task(picker(f"p{i}")) for i in range(3)]
    await asyncio.sleep(0.1)
    await apply("pay", "paid")
    await apply("restock", stock_delta=2)
    await asyncio.sleep(0.1)
    log("pickers done", [p.done() for p in pickers])

    async def impatient():
        try:
            await asyncio.wait_for(await_state("impatient", "refunded"), 0.12)
        except TimeoutError as e:
            log("impatient gave up", d(e), "state_changed", state(state_changed))

    restart()
    imp = asyncio.create_task(impatient())
    await apply("pack", "packed")
    await imp

    # a waiter cancelled while someone else holds the lock
    late = asyncio.create_task(await_state("late", "delivered"))
    await asyncio.sleep(0.08)
    async with lock:
        state_changed.notify_all()
        late.cancel("stop waiting")
        await asyncio.sleep(0.08)
        log("holder releases, late done", late.done())
    try:
        await late
    except asyncio.CancelledError as e:
        log("late", d(e), "locked", lock.locked())

    async def checker():
        async with state_changed:
            try:
                return await state_changed.wait_for(strict)
            except ValueError as e:
                log("checker:", d(e), "lock held", lock.locked())
                raise

    chk = asyncio.create_task(checker())
    await asyncio.sleep(0.08)
    await apply("restock", stock_delta=1)
    await apply("ship", "shipped")
    await asyncio.sleep(0)
    log("checker result", chk.result() if chk.done() else "pending")
    seen = await asyncio.gather(*waiters)
    log("waiters saw", seen)
    await asyncio.gather(*pickers)

    await apply("return", "returned")
    chk = asyncio.create_task(checker())
    await asyncio.sleep(0)
    await apply("cancel", "cancelled")
    try:
        log("second checker result", await chk)
    except ValueError as e:
        log("checker raised", d(e), "locked", lock.locked())
    log("history", order["history"])


asyncio.run(main())
