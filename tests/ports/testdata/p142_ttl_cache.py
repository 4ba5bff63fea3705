# A TTL cache in front of a slow backend: concurrent misses for one key
# share one Future (single flight, awaited through shield so that a
# waiter's cancellation leaves the fetch running); a failed fetch goes to
# every waiter and is not cached; an entry past its TTL is served stale
# while one background task refreshes it; the fill tasks are tracked
# with a done callback and cancelled at close.
import asyncio

from probe import d, log, restart

calls = []


async def backend(key):
    calls.append(key)
    n = calls.count(key)
    await asyncio.sleep(0.2)
    if key == "bad":
        raise ConnectionError(f"{key} unavailable")
    return f"{key}-v{n}"


class Cache:
    def __init__(self, loop, fetch, ttl):
        self.loop = loop
        self.fetch = fetch
        self.ttl = ttl
        self.entries = {}
        self.inflight = {}
        self.filling = set()
        self.fetches = 0

    async def get(self, key):
        now = self.loop.time()
        if key in self.entries:
            value, expires = self.entries[key]
            if now < expires:
                return value, "hit"
            if key not in self.inflight:
                self._start(key)
            return value, "stale"
        fut = self.inflight.get(key)
        how = "joined"
        if fut is None:
            fut = self._start(key)
            how = "miss"
        return await asyncio.shield(fut), how

    def _start(self, key):
        fut = self.loop.create_future()
        self.inflight[key] = fut
        task = asyncio.create_task(self._fill(key, fut), name=f"fill-{key}")
        self.filling.add(task)
        task.add_done_callback(self.filling.discard)
        return fut

    async def _fill(self, key, fut):
        self.fetches += 1
        try:
            value = await self.fetch(key)
        except asyncio.CancelledError:
            log("fill", key, "cancelled")
            fut.cancel()
            raise
        except Exception as e:
            fut.set_exception(e)
        else:
            fut.set_result(value)
            self.entries[key] = (value, self.loop.time() + self.ttl)
        finally:
            del self.inflight[key]

    async def close(self):
        for t in self.filling:
            t.cancel()
        await asyncio.gather(*self.filling, return_exceptions=True)


async def main():
    restart()
    cache = Cache(asyncio.get_running_loop(), backend, 0.5)

    async def show(key):
        try:
            v, how = await cache.get(key)
            return f"{key}={v} {how}"
        except Exception as e:
            return f"{key} failed {d(e)}"

    r = await asyncio.gather(show("a"), show("a"), show("bad"), show("a"), show("bad"))
    log("round 1", r)
    log("fetches", cache.fetches, "cached", sorted(cache.entries), "inflight", sorted(cache.inflight))
    await asyncio.sleep(0.1)
    log(await show("a"))
    await asyncio.sleep(0.53)
    log(await show("a"))
    log(await show("a"), "fetches", cache.fetches)
    waiter = asyncio.create_task(show("c"))
    await asyncio.sleep(0.06)
    waiter.cancel()
    try:
        await waiter
    except asyncio.CancelledError:
        log("waiter cancelled, c in flight", "c" in cache.inflight)
    await asyncio.sleep(0.03)
    log(await show("c"))
    log(await show("a"), "filling", len(cache.filling))
    await asyncio.sleep(0.6)
    log(await show("a"), "filling", sorted(t.get_name() for t in cache.filling))
    await cache.close()
    log("closed: filling", len(cache.filling), "inflight", sorted(cache.inflight), "a", cache.entries["a"][0])
    log("backend calls", calls)


asyncio.run(main())
