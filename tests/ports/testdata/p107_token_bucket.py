# A token-bucket rate limiter of the kind API clients carry: capacity 3,
# one token every 0.2 s, refilled lazily from loop.time(). acquire() takes
# a token at once if there is one and nobody queues; otherwise it queues
# a future, and a single call_at timer (armed only when none is pending,
# at the next token's due time) hands tokens to waiters in FIFO order. A
# waiter whose wait_for gives up leaves the queue and the next one gets
# the token; the last waiter leaving cancels the timer; a waiter
# cancelled by a timer due with the bucket's, right after the grant,
# gives the token back. (The refill adds 1 us before
# dividing: a timer may run a hair before its deadline on a real clock.)
import asyncio
import collections

from probe import d, log, rel, restart


class Bucket:
    def __init__(self, interval, capacity):
        self.loop = asyncio.get_running_loop()
        self.interval, self.capacity = interval, capacity
        self.tokens = capacity
        self.updated = self.loop.time()
        self.waiters = collections.deque()
        self.timer = None

    def _refill(self):
        now = self.loop.time()
        n = int((now - self.updated + 1e-6) / self.interval)
        if n:
            self.tokens = min(self.capacity, self.tokens + n)
            self.updated = now if self.tokens == self.capacity else self.updated + n * self.interval

    def _arm(self):
        if self.timer is None and self.waiters:
            self.timer = self.loop.call_at(self.updated + self.interval, self._wake)
            log("timer armed for", rel(self.timer.when()))

    def _wake(self):
        self.timer = None
        self._refill()
        while self.tokens and self.waiters:
            who, fut = self.waiters.popleft()
            fut.set_result(None)
            self.tokens -= 1
        self._arm()

    async def acquire(self, who):
        self._refill()
        if self.tokens and not self.waiters:
            self.tokens -= 1
            return
        fut = self.loop.create_future()
        self.waiters.append((who, fut))
        self._arm()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.tokens += 1
                log(who, "gives its token back")
            else:
                self.waiters.remove((who, fut))
            if not self.waiters and self.timer is not None:
                self.timer.cancel()
                self.timer = None
                log("timer cancelled, tokens", self.tokens)
            raise


async def main():
    restart()
    bucket = Bucket(0.2, 3)

    async def call(who, patience=None):
        try:
            await asyncio.wait_for(bucket.acquire(who), patience)
        except TimeoutError:
            log(who, "gave up waiting")
            return
        log(who, "granted, tokens left", bucket.tokens)

    await asyncio.gather(*(call(f"r{i}", 0.3 if i == 5 else None) for i in range(1, 7)))
    log("burst done, waiters", len(bucket.waiters))

    await asyncio.sleep(1.0)
    restart()
    bucket._refill()
    log("after idle, tokens", bucket.tokens)
    await asyncio.gather(*(call(f"s{i}") for i in range(1, 4)))
    lone = asyncio.create_task(call("lone"))
    await asyncio.sleep(0.1)
    lone.cancel()
    try:
        await lone
    except asyncio.CancelledError as e:
        log("lone", d(e), "waiters", len(bucket.waiters), "timer", bucket.timer)

    late = asyncio.create_task(call("late"))
    await asyncio.sleep(0)
    bucket.loop.call_at(bucket.timer.when(), late.cancel)
    try:
        await late
    except asyncio.CancelledError:
        log("late cancelled after its grant, tokens", bucket.tokens, "timer", bucket.timer)


asyncio.run(main())
