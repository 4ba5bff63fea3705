# A request handler that carries one absolute deadline through its steps
# with asyncio.timeout_at: each step checks the budget left (when() minus
# loop.time()) and skips optional work that cannot fit, a critical commit
# suspends the deadline with reschedule(None) and restores it afterwards,
# a deadline already in the past fires at the first await, nested
# deadlines report which one expired, a timeout(None) is armed later, and
# a finished scope refuses to be rescheduled.
import asyncio

from probe import d, log, restart, rel


async def step(name, cost):
    await asyncio.sleep(cost)
    return name


async def handle(rid, budget, steps, commit_cost):
    loop = asyncio.get_running_loop()
    done = []
    cm = asyncio.timeout_at(loop.time() + budget)
    try:
        async with cm:
            for name, cost, optional in steps:
                left = cm.when() - loop.time()
                if optional and left < cost:
                    log(rid, "skips", name, "left", f"{left:.1f}")
                    continue
                done.append(await step(name, cost))
            saved = cm.when()
            cm.reschedule(None)
            log(rid, "commit starts, deadline", rel(cm.when()))
            await asyncio.sleep(commit_cost)
            cm.reschedule(saved)
            log(rid, "commit done, deadline back", rel(cm.when()), "expired", cm.expired())
            await step("reply", 0.05)
            done.append("reply")
    except TimeoutError as e:
        log(rid, "deadline hit", d(e), "after", done, "expired", cm.expired())
        return rid, "timeout"
    log(rid, "finished", done)
    return rid, "ok"


async def main():
    restart()
    loop = asyncio.get_running_loop()
    steps = [("auth", 0.03, False), ("enrich", 0.2, True), ("load", 0.1, False)]
    results = await asyncio.gather(
        handle("r1", 0.6, steps, 0.1),
        handle("r2", 0.3, steps, 0.1),
        handle("r3", 0.22, steps, 0.25),
    )
    log("results", results)

    restart()
    try:
        async with asyncio.timeout_at(loop.time() - 1) as cm:
            log("past deadline entered, expired", cm.expired())
            await asyncio.sleep(0)
            log("not reached")
    except TimeoutError as e:
        log("past deadline", d(e), "expired", cm.expired(), "when", rel(cm.when() + 1))

    restart()
    try:
        async with asyncio.timeout_at(loop.time() + 0.3) as outer:
            try:
                async with asyncio.timeout_at(loop.time() + 0.6) as inner:
                    await asyncio.sleep(1)
            except TimeoutError:
                log("inner caught it")
            log("not reached either")
    except TimeoutError:
        log("outer caught it: outer expired", outer.expired(), "inner expired", inner.expired())

    restart()
    async with asyncio.timeout(None) as cm:
        log("no deadline", rel(cm.when()), cm.expired())
        await asyncio.sleep(0.12)
        cm.reschedule(loop.time() + 0.2)
        log("armed for", rel(cm.when()))
        try:
            await asyncio.sleep(0.05)
            log("still inside, expired", cm.expired())
        finally:
            pass
    log("left without firing, expired", cm.expired())
    for when in (None, loop.time() + 1):
        try:
            cm.reschedule(when)
        except RuntimeError as e:
            log("reschedule after exit", d(e))
    try:
        asyncio.timeout_at(loop.time()).reschedule(None)
    except RuntimeError as e:
        log("reschedule before enter", d(e))

    restart()

    async def guarded():
        async with asyncio.timeout(0.5) as cm:
            try:
                await asyncio.sleep(1)
            finally:
                log("guarded finally, expired", cm.expired())

    t = asyncio.create_task(guarded())
    await asyncio.sleep(0.2)
    t.cancel("client gone")
    try:
        await t
    except asyncio.CancelledError as e:
        log("outside cancel stays", d(e), "uncancel count", t.cancelling())


asyncio.run(main())
