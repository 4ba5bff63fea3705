# An aiohttp-like ClientSession: a connection pool per host with
# keep-alive reuse, a limit per host (a semaphore), a pool acquire timeout,
# and a request on a connection the server drops, retried once on a new
# connection (aiohttp retries a request whose connection was closed under
# it with ServerDisconnectedError).
import asyncio

from probe import d, log, restart

DELAYS = {"/a": 0.1, "/b": 0.2, "/slow": 0.6, "/flaky": 0.08}


class ServerDisconnectedError(Exception):
    pass


class PoolTimeoutError(Exception):
    pass


def make_handler(name):
    state = {"flaky": 0}

    async def handle(reader, writer):
        while True:
            line = await reader.readline()
            if not line:
                break
            path = line.decode().split()[1]
            if path == "/flaky" and state["flaky"] == 0:
                state["flaky"] += 1
                log("server", name, "drops the connection on", path)
                break
            await asyncio.sleep(DELAYS[path])
            writer.write(f"200 {name}{path}\n".encode())
            await writer.drain()
        writer.close()
        await writer.wait_closed()

    return handle


class Connection:
    def __init__(self, name, reader, writer):
        self.name, self.reader, self.writer = name, reader, writer


class HostPool:
    def __init__(self, limit):
        self.sem = asyncio.Semaphore(limit)
        self.idle = []
        self.made = 0


class ClientSession:
    def __init__(self, ports, limit_per_host, pool_timeout):
        self.ports = ports
        self.limit = limit_per_host
        self.pool_timeout = pool_timeout
        self.pools = {}

    async def _acquire(self, host):
        pool = self.pools.setdefault(host, HostPool(self.limit))
        try:
            async with asyncio.timeout(self.pool_timeout):
                await pool.sem.acquire()
        except TimeoutError:
            raise PoolTimeoutError(f"no free connection to {host}") from None
        if pool.idle:
            return pool, pool.idle.pop()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.ports[host])
        except BaseException:
            pool.sem.release()
            raise
        pool.made += 1
        return pool, Connection(f"{host}#{pool.made}", reader, writer)

    def _release(self, pool, conn, keep):
        if keep:
            pool.idle.append(conn)
        else:
            conn.writer.close()
        pool.sem.release()

    async def get(self, host, path):
        for attempt in (1, 2):
            pool, conn = await self._acquire(host)
            keep = False
            try:
                conn.writer.write(f"GET {path}\n".encode())
                line = await conn.reader.readline()
                if not line:
                    raise ServerDisconnectedError(f"{conn.name} closed")
                keep = True
                return line.decode().strip(), conn.name
            except ServerDisconnectedError as e:
                if attempt == 2:
                    raise
                log("client retries", host + path, "after", d(e))
            finally:
                self._release(pool, conn, keep)

    async def close(self):
        for pool in self.pools.values():
            for conn in pool.idle:
                conn.writer.close()
                await conn.writer.wait_closed()
            pool.idle.clear()


async def main():
    restart()
    servers = {}
    for name in ("A", "B"):
        servers[name] = await asyncio.start_server(make_handler(name), "127.0.0.1", 0)
    ports = {n: s.sockets[0].getsockname()[1] for n, s in servers.items()}
    session = ClientSession(ports, limit_per_host=2, pool_timeout=0.25)

    async def fetch(host, path, delay):
        await asyncio.sleep(delay)
        try:
            status, via = await session.get(host, path)
            log("fetch", host + path, "->", status, "via", via)
        except (PoolTimeoutError, ServerDisconnectedError) as e:
            log("fetch", host + path, "failed", d(e))

    async with asyncio.TaskGroup() as tg:
        tg.create_task(fetch("A", "/slow", 0))
        tg.create_task(fetch("A", "/a", 0.01))
        tg.create_task(fetch("A", "/b", 0.02))
        tg.create_task(fetch("A", "/a", 0.03))
        tg.create_task(fetch("B", "/b", 0.07))
        tg.create_task(fetch("B", "/flaky", 0.3))
    log("pools", {h: (p.made, [c.name for c in p.idle]) for h, p in session.pools.items()})
    await session.close()
    for srv in servers.values():
        srv.close()
        await srv.wait_closed()
    log("closed")


asyncio.run(main())
