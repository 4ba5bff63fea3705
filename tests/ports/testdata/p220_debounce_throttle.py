# Debounce and throttle driven by events, as UI and file-watcher code
# writes them: a trailing-edge debounce (each event cancels the pending
# call and schedules a new one wait seconds later, so a burst runs the
# handler once with the last value; flush() runs a pending call now), and
# a leading-edge throttle (the first event of an interval runs at once,
# the rest of the interval are dropped and counted).
import asyncio

from probe import d, log, restart


class Debouncer:
    def __init__(self, wait, handler):
        self.wait, self.handler = wait, handler
        self.pending = None
        self.value = None
        self.runs = []

    def __call__(self, value):
        self.value = value
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()
        self.pending = asyncio.create_task(self._later())

    async def _later(self):
        await asyncio.sleep(self.wait)
        await self._fire()

    async def _fire(self):
        value, self.value = self.value, None
        task = asyncio.create_task(self.handler(value))
        self.runs.append(task)
        await task

    async def flush(self):
        if self.pending is not None and not self.pending.done():
            self.pending.cancel()
            await self._fire()


class Throttler:
    def __init__(self, interval, handler):
        self.interval, self.handler = interval, handler
        self.last = None
        self.dropped = 0
        self.tasks = []

    def __call__(self, value):
        now = asyncio.get_running_loop().time()
        if self.last is not None and now - self.last < self.interval:
            self.dropped += 1
            return
        self.last = now
        self.tasks.append(asyncio.create_task(self.handler(value)))


async def search(query):
    log("search for", repr(query))
    await asyncio.sleep(0.03)
    log("results for", repr(query))


async def on_scroll(pos):
    log("scroll handler at", pos)


EVENTS = [
    (0.00, "key", "h"), (0.01, "scroll", 10), (0.06, "key", "he"), (0.07, "scroll", 20),
    (0.12, "key", "hel"), (0.13, "scroll", 30), (0.19, "scroll", 40), (0.27, "scroll", 50),
    (0.31, "scroll", 60), (0.38, "key", "hell"), (0.44, "key", "hello"), (0.49, "scroll", 70),
    (0.85, "key", "x"), (0.87, "scroll", 80),
]


async def main():
    restart()
    loop = asyncio.get_running_loop()
    start = loop.time()
    debounced = Debouncer(0.14, search)
    throttled = Throttler(0.2, on_scroll)
    for at, kind, value in EVENTS:
        await asyncio.sleep(start + at - loop.time())
        (debounced if kind == "key" else throttled)(value)
    await asyncio.sleep(0.09)
    log("flush with", repr(debounced.value), "pending")
    await debounced.flush()
    await asyncio.gather(*throttled.tasks)
    log("search ran", len(debounced.runs), "times; scroll ran", len(throttled.tasks),
        "dropped", throttled.dropped)


asyncio.run(main())
