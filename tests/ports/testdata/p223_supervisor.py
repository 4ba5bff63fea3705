# A one-for-one supervisor (the shape of aiotools / erlang-style
# supervisors in asyncio): each child runs under its own supervise() loop
# that restarts it after a crash, within a restart budget (max_restarts
# in a sliding window); a permanent error is not retried; a child that
# finishes normally is not restarted. The supervisors run in a TaskGroup:
# a budget exhausted fails the group, the siblings are cancelled (a child
# failing while being cancelled is not restarted), and the caller handles
# the ExceptionGroup with except*.
import asyncio
from collections import deque

from probe import d, log, restart


class RestartBudgetExceeded(Exception):
    pass


class PermanentError(Exception):
    pass


async def supervise(name, child, max_restarts=3, window=1.0, backoff=0.1):
    loop = asyncio.get_running_loop()
    restarts = deque()
    attempt = 0
    while True:
        attempt += 1
        try:
            await child(attempt)
        except asyncio.CancelledError:
            log(name, "cancelled in attempt", attempt)
            raise
        except PermanentError as e:
            log(name, "permanent failure", d(e))
            raise
        except Exception as e:
            if asyncio.current_task().cancelling():
                log(name, "failed while being cancelled", d(e))
                raise
            now = loop.time()
            while restarts and now - restarts[0] > window:
                restarts.popleft()
            if len(restarts) >= max_restarts:
                log(name, "restart budget exhausted at", d(e))
                raise RestartBudgetExceeded(f"{name}: {len(restarts)} restarts in {window}s") from e
            restarts.append(now)
            log(name, "crashed", d(e), "- restart", len(restarts))
            await asyncio.sleep(backoff)
        else:
            log(name, "finished normally after", attempt, "attempts")
            return name


async def ticker(attempt):
    for i in range(3):
        await asyncio.sleep(0.17)
    log("ticker done")


async def flaky(attempt):
    await asyncio.sleep(0.18)
    if attempt <= 2:
        raise ConnectionError(f"flaky lost its connection #{attempt}")
    await asyncio.sleep(5)


async def doomed(attempt):
    await asyncio.sleep(0.19)
    raise RuntimeError(f"doomed crash #{attempt}")


async def config(attempt):
    await asyncio.sleep(0.27)
    raise PermanentError("bad config")


async def closer(attempt):
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError:
        raise OSError("closer could not flush") from None


async def main():
    restart()
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(supervise(n, c)) for n, c in
                     (("ticker", ticker), ("flaky", flaky), ("doomed", doomed))]
    except* RestartBudgetExceeded as eg:
        log("supervisor tree failed:", [d(e) for e in eg.exceptions],
            "cause", d(eg.exceptions[0].__cause__))
    log("children", [t.result() if not t.cancelled() and not t.exception() else
                     "cancelled" if t.cancelled() else d(t.exception()) for t in tasks])

    restart()
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(supervise("flaky2", flaky))
            tg.create_task(supervise("config", config))
            tg.create_task(supervise("closer", closer))
    except* PermanentError as eg:
        log("permanent:", [d(e) for e in eg.exceptions])
    except* OSError as eg:
        log("during cancellation:", [d(e) for e in eg.exceptions])
    log("done")


asyncio.run(main())
