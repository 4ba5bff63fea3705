# An async LRU cache (async-lru's alru_cache) with in-flight
# de-duplication: concurrent callers of one key share one load (a task);
# each caller awaits it through asyncio.shield, so a cancelled caller does
# not cancel the load for the others, and a load whose callers all left
# still fills the cache. Errors are not cached: the next call loads
# again. The least recently used key is evicted past maxsize.
import asyncio
from collections import OrderedDict

from probe import d, log, restart


class AsyncLRU:
    def __init__(self, fn, maxsize):
        self.fn, self.maxsize = fn, maxsize
        self.cache = OrderedDict()
        self.inflight = {}
        self.hits = self.shared = 0

    async def __call__(self, key):
        if key in self.cache:
            self.cache.move_to_end(key)
            self.hits += 1
            return self.cache[key]
        task = self.inflight.get(key)
        if task is None:
            task = asyncio.create_task(self._load(key))
            self.inflight[key] = task
        else:
            self.shared += 1
        return await asyncio.shield(task)

    async def _load(self, key):
        try:
            value = await self.fn(key)
        finally:
            del self.inflight[key]
        self.cache[key] = value
        if len(self.cache) > self.maxsize:
            old, _ = self.cache.popitem(last=False)
            log("evicted", old)
        return value


LOADS = []


async def fetch_user(key):
    LOADS.append(key)
    log("load", key)
    await asyncio.sleep(0.2 if key != "slow" else 0.5)
    if key.startswith("bad"):
        raise LookupError(f"no user {key}")
    return key.upper()


async def caller(cache, name, key, delay=0):
    await asyncio.sleep(delay)
    try:
        value = await cache(key)
        log(name, "got", value)
        return value
    except LookupError as e:
        log(name, "failed", d(e))
    except asyncio.CancelledError:
        log(name, "cancelled")
        raise


async def main():
    restart()
    cache = AsyncLRU(fetch_user, maxsize=2)

    c = [asyncio.create_task(caller(cache, f"c{i}", "a", 0.01 * i)) for i in range(3)]
    await asyncio.sleep(0.06)
    c[0].cancel()
    await asyncio.gather(*c, return_exceptions=True)
    log("loads", LOADS, "shared", cache.shared, "in flight", list(cache.inflight))
    await caller(cache, "c3", "a")

    await asyncio.gather(caller(cache, "e1", "bad"), caller(cache, "e2", "bad", 0.03))
    await caller(cache, "e3", "bad")
    log("cached after errors", list(cache.cache))

    await caller(cache, "b1", "b")
    await caller(cache, "a again", "a")
    await caller(cache, "c1", "c")
    log("cache", list(cache.cache), "hits", cache.hits)

    s = [asyncio.create_task(caller(cache, f"s{i}", "slow")) for i in range(2)]
    await asyncio.sleep(0.1)
    for t in s:
        t.cancel()
    await asyncio.gather(*s, return_exceptions=True)
    log("callers gone, in flight", list(cache.inflight))
    await asyncio.sleep(0.48)
    log("cache", list(cache.cache))
    await caller(cache, "s2", "slow")
    log("loads", LOADS, "hits", cache.hits, "shared", cache.shared)


asyncio.run(main())
