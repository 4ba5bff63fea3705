# An asyncpg-like connection pool: min/max size, acquire with a timeout,
# release on the way out of `async with pool.connection()` however the
# body ends (a cancelled holder too), a connection broken mid-query
# replaced in the background, close() waiting for the acquired connections
# before closing the idle ones gracefully, and terminate() aborting a
# query in flight.
import asyncio
import contextlib

from probe import d, log, restart


class ConnectionBrokenError(Exception):
    pass


class InterfaceError(Exception):
    pass


class Conn:
    def __init__(self, cid):
        self.cid = cid
        self.broken = False
        self.terminated = False
        self.query = None

    async def fetch(self, q, dur, fail=False):
        self.query = asyncio.current_task()
        try:
            await asyncio.sleep(dur)
        except asyncio.CancelledError:
            if self.terminated:
                asyncio.current_task().uncancel()
                raise ConnectionBrokenError(f"conn{self.cid} terminated") from None
            raise
        finally:
            self.query = None
        if fail:
            self.broken = True
            raise ConnectionBrokenError(f"conn{self.cid} lost during {q}")
        return f"{q}@conn{self.cid}"

    async def close(self):
        await asyncio.sleep(0.01)
        log("conn", self.cid, "closed")

    def terminate(self):
        self.terminated = True
        if self.query is not None:
            self.query.cancel()
        log("conn", self.cid, "terminated")


class Pool:
    def __init__(self, min_size, max_size):
        self.min, self.max = min_size, max_size
        self.free = asyncio.Queue()
        self.conns = []
        self.next_id = 0
        self.in_use = set()
        self.closing = False
        self.changed = asyncio.Condition()
        self.tasks = set()

    async def _connect(self):
        self.next_id += 1
        c = Conn(self.next_id)
        self.conns.append(c)
        await asyncio.sleep(0.08)
        log("pool: opened conn", c.cid)
        return c

    async def init(self):
        for c in await asyncio.gather(*[self._connect() for _ in range(self.min)]):
            self.free.put_nowait(c)

    async def acquire(self, timeout):
        if self.closing:
            raise InterfaceError("pool is closing")
        if self.free.empty() and len(self.conns) < self.max:
            c = await self._connect()
        else:
            async with asyncio.timeout(timeout):
                c = await self.free.get()
        self.in_use.add(c)
        return c

    async def _replace(self):
        self.free.put_nowait(await self._connect())

    async def release(self, c):
        self.in_use.discard(c)
        if c.broken or c.terminated:
            self.conns.remove(c)
            if c.broken and not self.closing:
                log("pool: replacing broken conn", c.cid)
                t = asyncio.create_task(self._replace())
                self.tasks.add(t)
                t.add_done_callback(self.tasks.discard)
        else:
            self.free.put_nowait(c)
        async with self.changed:
            self.changed.notify_all()

    @contextlib.asynccontextmanager
    async def connection(self, timeout=0.2):
        c = await self.acquire(timeout)
        try:
            yield c
        finally:
            await self.release(c)

    async def close(self):
        self.closing = True
        async with self.changed:
            log("pool: close waits for", len(self.in_use), "in use")
            await self.changed.wait_for(lambda: not self.in_use)
        while not self.free.empty():
            await self.free.get_nowait().close()
        log("pool: closed")

    def terminate(self):
        self.closing = True
        for c in list(self.conns):
            c.terminate()


async def query(pool, name, delay, dur, timeout=0.2, fail=False):
    await asyncio.sleep(delay)
    try:
        async with pool.connection(timeout) as c:
            log(name, "got conn", c.cid)
            log(name, "->", await c.fetch(name, dur, fail))
    except (TimeoutError, ConnectionBrokenError, InterfaceError) as e:
        log(name, "failed", d(e))
    except asyncio.CancelledError:
        log(name, "cancelled, free", pool.free.qsize(), "in use", len(pool.in_use))
        raise


async def main():
    restart()
    pool = Pool(2, 3)
    await pool.init()
    qs = [
        asyncio.create_task(query(pool, "q1", 0, 0.32)),
        asyncio.create_task(query(pool, "q2", 0, 0.1, fail=True)),
        asyncio.create_task(query(pool, "q3", 0.01, 0.22)),
        asyncio.create_task(query(pool, "q4", 0.02, 0.12)),
        asyncio.create_task(query(pool, "q5", 0.03, 0.1, timeout=0.08)),
        asyncio.create_task(query(pool, "q6", 0.04, 0.5, timeout=0.3)),
    ]
    await asyncio.sleep(0.42)
    qs[5].cancel()
    qs.append(asyncio.create_task(query(pool, "q7", 0.06, 0.2)))
    await asyncio.sleep(0.08)
    closer = asyncio.create_task(pool.close())
    qs.append(asyncio.create_task(query(pool, "q8", 0.03, 0.1)))
    await closer
    res = await asyncio.gather(*qs, return_exceptions=True)
    log("outcomes", [d(r) for r in res])

    pool2 = Pool(1, 1)
    await pool2.init()
    holder = asyncio.create_task(query(pool2, "long", 0, 10))
    await asyncio.sleep(0.1)
    pool2.terminate()
    await holder
    log("pool2 conns", len(pool2.conns), "free", pool2.free.qsize())


asyncio.run(main())
