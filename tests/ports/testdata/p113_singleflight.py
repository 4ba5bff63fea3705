# Request coalescing ("singleflight"), as API gateways write it: the first
# caller for a key starts the load as a task; later callers for the same
# key await asyncio.shield() of that task, so a caller that times out
# (wait_for) or is cancelled leaves the load running for the others. Every
# waiter of a failed load gets the same exception object. The load is
# cancelled only when its last waiter has gone (a reference count kept in
# the callers' finally blocks); a new caller after that starts a new load.
# A key is forgotten in the load's done callback; a caller that joins just
# before the end gets the result after the done callbacks ran.
import asyncio

from probe import d, log, restart

loads = []


class LoadError(Exception):
    pass


class Group:
    def __init__(self):
        self.flights = {}
        self.waiters = {}

    async def do(self, key, fn):
        task = self.flights.get(key)
        if task is None:
            task = asyncio.create_task(fn(key), name=f"load-{key}")
            self.flights[key] = task
            self.waiters[task] = 0
            task.add_done_callback(lambda t: self._forget(key, t))
            shared = False
        else:
            shared = True
        self.waiters[task] += 1
        try:
            return await asyncio.shield(task), shared
        finally:
            self.waiters[task] -= 1
            if self.waiters[task] == 0:
                del self.waiters[task]
            if task not in self.waiters and not task.done():
                log("last waiter of", key, "gone: cancelling the load")
                task.cancel()

    def _forget(self, key, task):
        if self.flights.get(key) is task:
            del self.flights[key]
        log("forgot", key, "cancelled" if task.cancelled() else "done")


async def fetch(key):
    loads.append(key)
    try:
        await asyncio.sleep(0.2 if key != "slow" else 1.0)
    except asyncio.CancelledError:
        log("load", key, "cancelled")
        raise
    if key.startswith("bad"):
        raise LoadError(key)
    return key.upper()


async def main():
    restart()
    g = Group()
    errors = []

    async def caller(name, key, delay=0.0, timeout=None):
        await asyncio.sleep(delay)
        try:
            value, shared = await asyncio.wait_for(g.do(key, fetch), timeout)
            log(name, "got", value, "shared", shared)
        except (LoadError, TimeoutError) as e:
            errors.append(e)
            log(name, "failed", d(e))
        except asyncio.CancelledError:
            log(name, "cancelled")

    callers = [
        asyncio.create_task(caller("a1", "a")),
        asyncio.create_task(caller("a2", "a", 0.05)),
        asyncio.create_task(caller("a3", "a", 0.06, timeout=0.05)),
        asyncio.create_task(caller("b1", "bad")),
        asyncio.create_task(caller("b2", "bad", 0.1)),
    ]
    await asyncio.gather(*callers)
    log("same error object", errors[-2] is errors[-1], "loads", loads)

    s1 = asyncio.create_task(caller("s1", "slow"))
    s2 = asyncio.create_task(caller("s2", "slow", 0.1))
    await asyncio.sleep(0.2)
    s1.cancel()
    await asyncio.sleep(0.1)
    log("slow still in flight", "slow" in g.flights)
    s2.cancel()
    await asyncio.gather(s1, s2)
    await asyncio.sleep(0)
    log("slow in flight after last waiter", "slow" in g.flights)
    await caller("s3", "slow", timeout=0.1)
    await asyncio.sleep(0)
    log("loads", loads)

    # a caller arriving as the load completes
    t = asyncio.create_task(caller("c1", "c"))
    await asyncio.sleep(0.19)
    log("c in flight", "c" in g.flights, "done", g.flights["c"].done() if "c" in g.flights else None)
    await caller("c2", "c")
    await t
    log("loads", loads)


asyncio.run(main())
