# A token-bucket RateLimiter guarded by an asyncio.Lock, from "how to use
# asyncio for rate limiting?", https://howto.im/q/how-to-use-asyncio-for-rate-limiting
# (class RateLimiter(rate, period): tokens refilled in proportion to the
# time since the last refill, capped at rate; acquire() waits for a token
# under the lock). Adapted: loop.time() instead of time.monotonic() (so
# the port can run on virtual time), log() instead of print, 3 requests
# per 0.6 s and a burst of 6 requests.
import asyncio

from probe import log, restart


class RateLimiter:
    def __init__(self, rate: int, period: float):
        self.rate = rate  # Number of requests allowed
        self.period = period  # Time period in seconds
        self.tokens = rate  # Initial tokens in the bucket
        self.last_refill = asyncio.get_running_loop().time()  # Last time the bucket was refilled
        self.lock = asyncio.Lock()  # Only one task refills at a time
        self.waits = 0

    def _refill(self):
        now = asyncio.get_running_loop().time()
        elapsed = now - self.last_refill
        self.tokens = min(self.rate, self.tokens + elapsed * (self.rate / self.period))
        self.last_refill = now

    async def acquire(self):
        async with self.lock:
            self._refill()
            while self.tokens < 1:
                self.waits += 1
                await asyncio.sleep((1 - self.tokens) * (self.period / self.rate))
                self._refill()
            self.tokens -= 1


async def make_request(limiter, i):
    log(f"request {i}: waiting for a token")
    await limiter.acquire()
    log(f"request {i}: sent, whole tokens left {int(limiter.tokens)}")
    await asyncio.sleep(0.005)
    return i


async def main():
    restart()
    limiter = RateLimiter(rate=3, period=0.6)
    tasks = []
    for i in range(6):
        tasks.append(asyncio.create_task(make_request(limiter, i)))
    results = await asyncio.gather(*tasks)
    log("results", results, "waits", limiter.waits, "locked", limiter.lock.locked())


asyncio.run(main())
