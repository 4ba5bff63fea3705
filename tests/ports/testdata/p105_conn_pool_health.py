# A client-side connection pool in front of a backend that speaks PING
# and ECHO, and closes a connection idle for 0.3 s. The pool holds at
# most two connections (a Semaphore); acquire() takes the most recently
# released idle connection and health-checks it (PING, with wait_for
# 0.2); a connection the backend closed fails the check (readline gets
# b'') and is dropped, as is one whose PING times out (the backend was
# told to stall that connection), and a new one is opened; release() puts
# the connection back; close() closes what is idle.
import asyncio

from probe import d, log, restart

server_conns = 0


async def backend(reader, writer):
    global server_conns
    server_conns += 1
    me = f"s{server_conns}"
    stall = 0
    while True:
        try:
            line = await asyncio.wait_for(reader.readline(), 0.3)
        except TimeoutError:
            log("backend:", me, "idle, closing")
            break
        if not line:
            log("backend:", me, "EOF")
            break
        cmd, _, arg = line.decode().strip().partition(" ")
        if stall:
            await asyncio.sleep(stall)
        if cmd == "PING":
            writer.write(b"PONG\n")
        elif cmd == "ECHO":
            writer.write(arg.encode() + b"\n")
        elif cmd == "STALL":
            stall = 0.5
            writer.write(b"OK\n")
    writer.close()
    await writer.wait_closed()


class Pool:
    def __init__(self, port, size):
        self.port = port
        self.sem = asyncio.Semaphore(size)
        self.idle = []
        self.opened = 0

    async def _healthy(self, conn):
        name, r, w = conn
        w.write(b"PING\n")
        try:
            line = await asyncio.wait_for(r.readline(), 0.2)
        except TimeoutError as e:
            log("pool: check of", name, "failed", d(e))
            return False
        if line != b"PONG\n":
            log("pool: check of", name, "got", line)
            return False
        return True

    async def acquire(self):
        await self.sem.acquire()
        while self.idle:
            conn = self.idle.pop()
            if await self._healthy(conn):
                return conn
            conn[2].close()
            await conn[2].wait_closed()
            log("pool: dropped", conn[0])
        self.opened += 1
        name = f"conn{self.opened}"
        r, w = await asyncio.open_connection("127.0.0.1", self.port)
        log("pool: opened", name)
        return name, r, w

    def release(self, conn):
        self.idle.append(conn)
        self.sem.release()

    async def close(self):
        while self.idle:
            name, r, w = self.idle.pop()
            w.close()
            await w.wait_closed()
            log("pool: closed", name)


async def request(pool, cmd):
    conn = await pool.acquire()
    try:
        name, r, w = conn
        w.write(cmd.encode() + b"\n")
        reply = (await r.readline()).decode().strip()
        log("request", cmd, "via", name, "->", reply)
    finally:
        pool.release(conn)


async def main():
    server = await asyncio.start_server(backend, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    pool = Pool(port, 2)
    await asyncio.gather(request(pool, "ECHO a"), request(pool, "ECHO b"), request(pool, "ECHO c"))
    log("idle", [c[0] for c in pool.idle])
    await asyncio.sleep(0.1)
    await request(pool, "ECHO d")
    await asyncio.sleep(0.36)
    log("after the backend's idle timeout")
    await request(pool, "ECHO e")
    await request(pool, "STALL")
    await request(pool, "ECHO f")
    log("idle", [c[0] for c in pool.idle], "opened", pool.opened)
    await pool.close()
    await asyncio.sleep(0.1)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
