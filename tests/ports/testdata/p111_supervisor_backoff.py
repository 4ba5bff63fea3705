# A supervisor that restarts crashed worker tasks with exponential backoff,
# as service code writes it: each worker task gets a done callback; the
# callback reads the task's outcome (cancelled(), exception(), result())
# and schedules the restart with loop.call_later(backoff, start, name, n),
# on the loop's clock. A worker that crashes before its first await (an
# eager-looking failure in the first step) is restarted the same way; one
# that exhausts its budget of restarts is given up on; one that returns
# normally is not restarted. At shutdown the supervisor cancels the pending
# restart timer handles and the live workers, and waits for them.
import asyncio

from probe import d, log, restart


class Crash(Exception):
    pass


PLANS = {
    # seconds before each attempt crashes; past the list: run until stopped
    "alpha": [0.1, 0.08],
    # crashes once, then finishes its job
    "beta": [0.19],
    # crashes at once every time
    "gamma": [0, 0, 0, 0, 0],
}
BASE = 0.13
MAX_RESTARTS = 3


async def worker(name, attempt):
    plan = PLANS[name]
    if attempt < len(plan):
        if plan[attempt] == 0:
            raise Crash(f"{name}#{attempt} at start")
        await asyncio.sleep(plan[attempt])
        raise Crash(f"{name}#{attempt}")
    if name == "beta":
        await asyncio.sleep(0.15)
        return f"{name} done"
    try:
        await asyncio.sleep(10)
    finally:
        log(name, "attempt", attempt, "stopping")


class Supervisor:
    def __init__(self):
        self.loop = asyncio.get_running_loop()
        self.tasks = {}
        self.timers = {}
        self.history = []
        self.gave_up = asyncio.Event()

    def start(self, name, attempt=0):
        self.timers.pop(name, None)
        task = asyncio.create_task(worker(name, attempt), name=f"{name}-{attempt}")
        self.tasks[name] = task
        task.add_done_callback(lambda t: self.on_done(name, attempt, t))
        log("started", task.get_name())

    def on_done(self, name, attempt, task):
        if self.tasks.get(name) is task:
            del self.tasks[name]
        if task.cancelled():
            self.history.append(f"{name}:stopped")
            return
        exc = task.exception()
        if exc is None:
            log(task.get_name(), "finished", repr(task.result()))
            self.history.append(f"{name}:ok")
            return
        self.history.append(f"{name}:{d(exc)}")
        if attempt >= MAX_RESTARTS:
            log(task.get_name(), "crashed", d(exc), "- giving up")
            self.gave_up.set()
            return
        delay = BASE * 2 ** attempt
        h = self.loop.call_later(delay, self.start, name, attempt + 1)
        self.timers[name] = h
        log(task.get_name(), "crashed", d(exc), "- restart in", f"{delay:.2f}")

    async def stop(self):
        for name, h in sorted(self.timers.items()):
            h.cancel()
            log("cancelled restart of", name)
        tasks = [self.tasks[n] for n in sorted(self.tasks)]
        for t in tasks:
            t.cancel()
        res = await asyncio.gather(*tasks, return_exceptions=True)
        log("stopped", [t.get_name() for t in tasks], [d(r) for r in res])


async def main():
    restart()
    sup = Supervisor()
    for name in PLANS:
        sup.start(name)
    log("live", sorted(t.get_name() for t in sup.tasks.values()))
    await sup.gave_up.wait()
    log("gamma gave up; live", sorted(t.get_name() for t in sup.tasks.values()))
    await asyncio.sleep(0.05)
    # a second round: alpha crashes again on demand, stop() finds its restart pending
    PLANS["alpha"].extend([0.1, 0.1, 0.1])
    sup.tasks["alpha"].cancel()
    await asyncio.sleep(0)
    sup.start("alpha", 2)
    await asyncio.sleep(0.15)
    await sup.stop()
    log("history", sup.history)


asyncio.run(main())
