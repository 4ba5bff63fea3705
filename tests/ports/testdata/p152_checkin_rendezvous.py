# A check-in rendezvous between a coordinator and workers on a Condition
# and an Event. Each worker checks in under the condition and waits with
# wait_for() until everyone expected has arrived (its predicate logs each
# check); the last to arrive notify_all()s and sets the Event the
# coordinator waits on. A worker cancelled while waiting re-acquires the
# lock before its CancelledError reaches its cleanup, which leaves the
# roster; the coordinator then expects one fewer and notifies everyone.
# A start Event set and cleared at once still releases every waiter it
# had, and one cancelled after set() but before it ran raises
# CancelledError with the message.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    cond = asyncio.Condition()
    all_in = asyncio.Event()
    roster = set()
    expected = 4

    def check(name):
        ok = len(roster) >= expected
        log(name, "checks", f"{len(roster)}/{expected}", ok)
        return ok

    async def worker(name, arrive):
        await asyncio.sleep(arrive)
        async with cond:
            roster.add(name)
            log(name, "checked in", len(roster))
            if len(roster) >= expected:
                cond.notify_all()
                all_in.set()
            try:
                await cond.wait_for(lambda: check(name))
            except asyncio.CancelledError as e:
                log(name, "cancelled while waiting", d(e), "lock held", cond.locked())
                roster.discard(name)
                raise
            log(name, "released")
        return name

    ws = [asyncio.create_task(worker(n, a)) for n, a in [("w1", 0.1), ("w2", 0.2), ("w3", 0.3), ("w4", 0.6)]]
    await asyncio.sleep(0.26)
    ws[1].cancel("w2 unplugged")
    try:
        await ws[1]
    except asyncio.CancelledError as e:
        log("w2 out", d(e), "roster", sorted(roster))
    async with cond:
        expected = 3
        log("coordinator expects", expected)
        cond.notify_all()
    await all_in.wait()
    log("all in", sorted(roster))
    res = await asyncio.gather(*ws, return_exceptions=True)
    log("workers", [d(r) if isinstance(r, BaseException) else r for r in res])

    restart()
    go = asyncio.Event()

    async def runner(name):
        await go.wait()
        log(name, "running")

    rs = [asyncio.create_task(runner(f"r{i}")) for i in range(3)]
    await asyncio.sleep(0.1)
    go.set()
    go.clear()
    log("set then clear: is_set", go.is_set())
    rs[2].cancel("late cancel")
    res = await asyncio.gather(*rs, return_exceptions=True)
    log("runners", [d(r) for r in res])


asyncio.run(main())
