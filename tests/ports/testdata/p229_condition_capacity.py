# A shared resource with a capacity guarded by an asyncio.Condition
# (wait_for a free slot, notify on release), the fix to the Event-based
# attempt in "The Condition: Advanced Task Coordination",
# https://dev.to/aaron_rose_0787cc8b4775a0/the-condition-advanced-task-coordination-34h5
# Adapted: 5 workers on 2 slots, each holding its slot for its own time
# (HOLD, where the article sleeps 2 s each) so that no two releases
# coincide; log() instead of print; the worker records the
# largest number of slots in use.
import asyncio

from probe import log, restart

HOLD = [0.2, 0.3, 0.4, 0.5, 0.3]


class SharedResource:
    def __init__(self, capacity):
        self.capacity = capacity
        self.in_use = 0
        self.peak = 0
        self.condition = asyncio.Condition()

    async def acquire(self):
        async with self.condition:
            await self.condition.wait_for(lambda: self.in_use < self.capacity)
            self.in_use += 1
            self.peak = max(self.peak, self.in_use)

    async def release(self):
        async with self.condition:
            self.in_use -= 1
            self.condition.notify()


async def main():
    restart()
    resource = SharedResource(capacity=2)

    async def worker(worker_id):
        log(f"Worker {worker_id} trying to acquire")
        await resource.acquire()
        log(f"Worker {worker_id} acquired resource, in use {resource.in_use}")
        await asyncio.sleep(HOLD[worker_id])
        await resource.release()
        log(f"Worker {worker_id} released resource")

    await asyncio.gather(*[worker(i) for i in range(5)])
    log("in use", resource.in_use, "peak", resource.peak)


asyncio.run(main())
