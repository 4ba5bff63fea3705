# A client with a time budget for all its attempts: each attempt gets
# wait_for(attempt(), remaining). Once the budget is spent the remaining
# time is 0 or less, and wait_for then wraps the coroutine in a task and
# cancels it before it ever runs (TimeoutError); a finished task given a
# zero timeout still yields its result, and a task that swallows the
# cancellation returns its value. asyncio.timeout() with a deadline
# already passed expires at the body's first suspension, even sleep(0),
# and not at all for a body that does not suspend; reschedule(None)
# disarms a scope, and a deadline moved into the past fires at once.
import asyncio

from probe import d, log, restart

runs = []


async def attempt(n, cost):
    runs.append(n)
    log("attempt", n, "starts")
    await asyncio.sleep(cost)
    if cost > 0.2:
        raise ConnectionError(f"slow {n}")
    return f"ok {n}"


async def call_with_budget(budget, costs):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget
    for n, cost in enumerate(costs):
        remaining = deadline - loop.time()
        try:
            return await asyncio.wait_for(attempt(n, cost), remaining)
        except TimeoutError:
            log("attempt", n, "timed out, remaining was", f"{max(remaining, 0):.1f}")
        except ConnectionError as e:
            log("attempt", n, "failed", d(e))
    return "gave up"


async def stubborn():
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        log("stubborn swallows the cancel")
    return "partial"


async def main():
    restart()
    r = await call_with_budget(0.5, [0.3, 0.25, 0.1, 0.1])
    log("result", r, "runs", runs)

    restart()
    loop = asyncio.get_running_loop()
    done = asyncio.create_task(asyncio.sleep(0.01, result="early"))
    await asyncio.sleep(0.02)
    log("finished task, zero timeout:", await asyncio.wait_for(done, 0))
    s = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    log("stubborn task, zero timeout:", await asyncio.wait_for(s, 0))
    try:
        await asyncio.wait_for(asyncio.sleep(1), -1)
    except TimeoutError as e:
        log("negative timeout:", d(e), "cause", d(e.__cause__))

    ev = asyncio.Event()
    ev.set()
    for label, body in [("no await", None), ("set event", ev.wait), ("sleep(0)", lambda: asyncio.sleep(0))]:
        try:
            async with asyncio.timeout_at(loop.time() - 1) as cm:
                if body is not None:
                    await body()
            log("past deadline,", label, "-> no timeout, expired", cm.expired())
        except TimeoutError:
            log("past deadline,", label, "-> TimeoutError, expired", cm.expired())

    try:
        async with asyncio.timeout(0.1) as cm:
            cm.reschedule(None)
            await asyncio.sleep(0.2)
            log("disarmed scope let 0.2 s pass, when", cm.when())
            cm.reschedule(loop.time() - 5)
            log("moved into the past, expired", cm.expired())
            await asyncio.sleep(1)
    except TimeoutError:
        log("fired at once, expired", cm.expired())


asyncio.run(main())
