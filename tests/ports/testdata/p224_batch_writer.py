# A batching writer (the shape of log shippers and metrics clients):
# items are collected until max_items or max_wait after the first one
# (asyncio.timeout_at), then flushed to the sink; a write runs shielded
# so a cancellation does not cut it in half. When the writer is
# cancelled it waits for the write in flight, drains what is queued
# without waiting, flushes that last batch (shielded), and re-raises.
import asyncio

from probe import d, log, restart


class BatchWriter:
    def __init__(self, name, sink, max_items, max_wait):
        self.name, self.sink = name, sink
        self.max_items, self.max_wait = max_items, max_wait
        self.q = asyncio.Queue()
        self.inflight = None
        self.flushes = []

    async def _flush(self, batch, reason):
        log(self.name, "flush", reason, batch)
        self.flushes.append((reason, len(batch)))
        self.inflight = asyncio.ensure_future(self.sink(self.name, batch))
        await asyncio.shield(self.inflight)

    async def run(self):
        loop = asyncio.get_running_loop()
        batch = []
        try:
            while True:
                batch.append(await self.q.get())
                try:
                    async with asyncio.timeout_at(loop.time() + self.max_wait):
                        while len(batch) < self.max_items:
                            batch.append(await self.q.get())
                    reason = "full"
                except TimeoutError:
                    reason = "timer"
                batch, out = [], batch
                await self._flush(out, reason)
        except asyncio.CancelledError as e:
            log(self.name, "cancelled", d(e), "holding", batch, "queued", self.q.qsize())
            if self.inflight is not None and not self.inflight.done():
                log(self.name, "waits for the write in flight")
                await self.inflight
            while not self.q.empty():
                batch.append(self.q.get_nowait())
            if batch:
                await asyncio.shield(self._flush(batch, "final"))
            raise


async def sink(name, batch):
    await asyncio.sleep(0.09)
    log(name, "sink wrote", len(batch))


async def main():
    restart()
    w = BatchWriter("w1", sink, max_items=4, max_wait=0.2)
    runner = asyncio.create_task(w.run())
    await asyncio.sleep(0.01)
    for i in range(6):
        w.q.put_nowait(f"a{i}")
    await asyncio.sleep(0.36)
    for i in range(3):
        w.q.put_nowait(f"b{i}")
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.08)
    runner.cancel("shutdown")
    try:
        await runner
    except asyncio.CancelledError:
        log("w1 stopped, flushes", w.flushes)

    restart()
    w2 = BatchWriter("w2", sink, max_items=3, max_wait=0.2)
    runner = asyncio.create_task(w2.run())
    await asyncio.sleep(0.01)
    for i in range(5):
        w2.q.put_nowait(f"c{i}")
    await asyncio.sleep(0.05)
    runner.cancel("shutdown")
    try:
        await runner
    except asyncio.CancelledError:
        log("w2 stopped, flushes", w2.flushes, "queue empty", w2.q.empty())


asyncio.run(main())
