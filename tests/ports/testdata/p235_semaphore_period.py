# Rate limiting with a semaphore that is released only a period after
# each operation ends ("Method 1: simple semaphore context manager" of
# "Rate limiting in async code",
# https://github.com/ericfeunekes/ericfeunekes.github.io): at most
# `operations` calls per `period`. Adapted: the mocked server returns
# loop time instead of a pendulum timestamp and takes 0.01 * i s instead
# of a random time, log() instead of print, 7 calls of at most 3 per
# 0.54 s, started through asyncio.gather.
import asyncio

from probe import log, restart


class RateLimiter:
    def __init__(self, operations: int, period: float):
        self.semaphore = asyncio.Semaphore(operations)
        self.period = period

    async def __aenter__(self):
        await self.semaphore.acquire()

    async def __aexit__(self, *exc):
        await asyncio.sleep(self.period)
        self.semaphore.release()


async def server(i):
    await asyncio.sleep(0.01 * i)
    return f"{asyncio.get_running_loop().time() - T0:.1f}"


async def call(limiter, i):
    async with limiter:
        stamp = await server(i)
        log(f"call {i} answered at {stamp}, semaphore locked {limiter.semaphore.locked()}")
    return stamp


async def main():
    global T0
    restart()
    T0 = asyncio.get_running_loop().time()
    limiter = RateLimiter(3, 0.54)
    stamps = await asyncio.gather(*(call(limiter, i) for i in range(7)))
    log("stamps", stamps)


asyncio.run(main())
