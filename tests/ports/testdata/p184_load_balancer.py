# A reverse proxy in front of three backends speaking a line protocol
# ("GET key" -> "OK name key" after the backend's latency, "ERR" while it
# is failing; "PING" -> "PONG"). A health checker PINGs every backend
# every 0.1 s (a 0.03 s timeout) and marks it up or down; each backend has
# a circuit breaker (closed; open after 2 failures in a row; half-open
# after a 0.2 s cool-down, letting one trial request through). Requests go
# round robin over the backends that are up and whose breaker allows them,
# hedged: if the first attempt has not answered after 0.05 s (or failed),
# a second starts on the next backend; the first success wins and the
# loser is cancelled and awaited. At 0.88 s the proxy drains: it stops
# accepting, waits up to 0.12 s for the requests in flight, then closes the
# clients (the requests still in flight finish, their replies dropped). Three clients send requests at scripted times.
import asyncio

from probe import d, log, restart

HOST = "127.0.0.1"
HEDGE_AFTER = 0.05
CHECK_EVERY = 0.1
FAILS_TO_OPEN = 2
COOL_DOWN = 0.2
GRACE = 0.12


class BackendError(Exception):
    pass


class Backend:
    def __init__(self, name, latency):
        self.name = name
        self.latency = latency
        self.failing = False
        self.server = None
        self.port = 0
        self.up = True
        self.state = "closed"
        self.fails = 0
        self.opened_at = 0.0
        self.trial = False

    async def start(self):
        self.server = await asyncio.start_server(self.handle, HOST, self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self):
        self.server.close()
        self.server.close_clients()
        await self.server.wait_closed()

    async def handle(self, reader, writer):
        parts = (await reader.readline()).decode().split()
        if parts == ["PING"]:
            writer.write(b"PONG\n")
        else:
            try:
                async with asyncio.timeout(self.latency):
                    await reader.read()  # EOF first: the proxy gave up
                log(f"{self.name}: proxy hung up on {parts[1]}")
            except TimeoutError:
                writer.write(b"ERR\n" if self.failing else f"OK {self.name} {parts[1]}\n".encode())
        writer.close()
        await writer.wait_closed()


# ---- circuit breaker ----

def allow(b):
    now = asyncio.get_running_loop().time()
    if b.state == "open" and now - b.opened_at >= COOL_DOWN:
        b.state = "half-open"
        log("proxy:", b.name, "breaker half-open")
    if b.state == "half-open":
        if b.trial:
            return False
        b.trial = True
        return True
    return b.state == "closed"


def record(b, ok):
    if ok:
        if b.state != "closed":
            log("proxy:", b.name, "breaker closed")
        b.state, b.fails, b.trial = "closed", 0, False
        return
    b.fails += 1
    b.trial = False
    if b.state == "half-open" or b.fails >= FAILS_TO_OPEN:
        if b.state != "open":
            log("proxy:", b.name, "breaker open after", b.fails, "failures")
        b.state = "open"
        b.opened_at = asyncio.get_running_loop().time()


# ---- proxy ----

class Proxy:
    def __init__(self, backends):
        self.backends = backends
        self.rr = 0
        self.inflight = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.server = None

    def pick(self):
        n = len(self.backends)
        start = self.rr % n
        self.rr += 1
        picks = []
        for i in range(n):
            b = self.backends[(start + i) % n]
            if b.up and len(picks) < 2 and allow(b):
                picks.append(b)
        return picks

    async def attempt(self, b, key):
        try:
            reader, writer = await asyncio.open_connection(HOST, b.port)
            try:
                writer.write(f"GET {key}\n".encode())
                reply = (await reader.readline()).decode().strip()
            finally:
                writer.close()
            if not reply.startswith("OK"):
                raise BackendError(f"{b.name} said {reply or 'nothing'}")
        except (OSError, BackendError) as e:
            log("proxy:", key, "on", b.name, "failed:", d(e))
            record(b, False)
            raise
        except asyncio.CancelledError:
            log("proxy:", key, "on", b.name, "cancelled")
            raise
        record(b, True)
        return reply

    async def hedged(self, picks, key):
        tasks = [asyncio.create_task(self.attempt(picks[0], key))]
        try:
            await asyncio.wait(tasks, timeout=HEDGE_AFTER)
            if len(picks) > 1 and not (tasks[0].done() and tasks[0].exception() is None):
                log("proxy:", key, "hedging to", picks[1].name)
                tasks.append(asyncio.create_task(self.attempt(picks[1], key)))
            while True:
                for t in tasks:
                    if t.done() and t.exception() is None:
                        return t.result()
                pending = [t for t in tasks if not t.done()]
                if not pending:
                    raise ExceptionGroup("all attempts failed", [t.exception() for t in tasks])
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def forward(self, key):
        picks = self.pick()
        if not picks:
            raise BackendError("no backend available")
        return await self.hedged(picks, key)

    async def handle(self, reader, writer):
        async for line in reader:
            key = line.decode().split()[1]
            self.inflight += 1
            self.idle.clear()
            try:
                reply = await self.forward(key)
            except (BackendError, ExceptionGroup) as e:
                reply = f"ERR {d(e)}"
            finally:
                self.inflight -= 1
                if self.inflight == 0:
                    self.idle.set()
            if writer.is_closing():
                log("proxy: reply for", key, "dropped: client closed")
                break
            writer.write(reply.encode() + b"\n")
        writer.close()

    async def drain(self):
        log("proxy: draining,", self.inflight, "in flight")
        self.server.close()
        try:
            async with asyncio.timeout(GRACE):
                await self.idle.wait()
            log("proxy: drained")
        except TimeoutError:
            log("proxy: grace over,", self.inflight, "still in flight")
        self.server.close_clients()
        await self.server.wait_closed()
        await self.idle.wait()
        log("proxy: closed")


async def health_checker(backends):
    tick = 0
    while True:
        for b in backends:
            try:
                async with asyncio.timeout(0.03):
                    reader, writer = await asyncio.open_connection(HOST, b.port)
                    writer.write(b"PING\n")
                    ok = (await reader.readline()) == b"PONG\n"
                    writer.close()
            except (OSError, TimeoutError):
                ok = False
            if ok != b.up:
                log("health:", b.name, "up" if ok else "down")
                b.up = ok
        tick += 1
        await sleep_until(0.015 + CHECK_EVERY * tick)


# ---- clients and the script ----

async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


async def client(name, port, script):
    reader, writer = await asyncio.open_connection(HOST, port)
    answered = 0
    for at, key in script:
        await sleep_until(at)
        writer.write(f"GET {key}\n".encode())
        reply = (await reader.readline()).decode().strip()
        if not reply:
            log(name, key, "-> connection closed")
            break
        log(name, key, "->", reply)
        answered += 1
    writer.close()
    await writer.wait_closed()
    return f"{name} {answered}/{len(script)}"


async def main():
    global T0
    restart()
    T0 = asyncio.get_running_loop().time()
    backends = [Backend("b0", 0.02), Backend("b1", 0.02), Backend("b2", 0.02)]
    for b in backends:
        await b.start()
    proxy = Proxy(backends)
    proxy.server = await asyncio.start_server(proxy.handle, HOST, 0)
    port = proxy.server.sockets[0].getsockname()[1]
    await sleep_until(0.015)
    checker = asyncio.create_task(health_checker(backends))
    clients = [
        asyncio.create_task(client("alice", port, [(0.03, "k1"), (0.12, "k2"), (0.32, "k3"), (0.51, "k4"), (0.73, "k5")])),
        asyncio.create_task(client("bob", port, [(0.06, "k6"), (0.16, "k7"), (0.34, "k8"), (0.46, "k9"), (0.68, "k10"), (0.86, "k11")])),
        asyncio.create_task(client("carol", port, [(0.09, "k12"), (0.28, "k13"), (0.43, "k14"), (0.69, "k15"), (0.92, "k16")])),
    ]
    events = [
        (0.1, "b1 slows down", lambda: setattr(backends[1], "latency", 0.15)),
        (0.26, "b2 stops", backends[2].stop),
        (0.38, "b0 starts failing", lambda: setattr(backends[0], "failing", True)),
        (0.57, "b0 recovers, b2 restarts", backends[2].start),
        (0.83, "every backend slows down", None),
    ]
    for at, what, action in events:
        await sleep_until(at)
        log("main:", what)
        if at == 0.57:
            backends[0].failing = False
        if at == 0.83:
            for b in backends:
                b.latency = 0.25
        elif asyncio.iscoroutinefunction(action):
            await action()
        else:
            action()
    await sleep_until(0.88)
    await proxy.drain()
    results = await asyncio.gather(*clients, return_exceptions=True)
    log("clients:", [d(r) if isinstance(r, BaseException) else r for r in results])
    checker.cancel()
    for b in backends:
        await b.stop()
    log("breakers:", [(b.name, b.state, b.up) for b in backends])


asyncio.run(main())
