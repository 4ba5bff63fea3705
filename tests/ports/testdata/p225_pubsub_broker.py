# A small pub/sub message broker (a mini NATS) over TCP streams: a line
# protocol (CONNECT name, SUB subject, UNSUB subject, PUB subject payload,
# PING -> PONG, every command answered with +OK or -ERR), subjects of
# dot-separated tokens with NATS wildcards ("*" one token, ">" the rest),
# and per-client outgoing queues: publish() puts a message on the queue of
# every client with a matching subscription without waiting, and a pump
# task per client writes the queue out, awaiting drain() under a small
# high-water mark. A full queue drops the message and marks the client;
# a sweeper disconnects a client whose queue stays full past a deadline
# (its pump is cancelled while it waits in drain, and an error line is
# written before the close). The server admits at most MAX_CLIENTS; a
# connection waits ADMIT_WAIT for a slot and is then turned away. At
# shutdown the server stops accepting, puts a last line on every queue,
# shuts the queues down (the pumps write what is left and close) and waits
# for the handler tasks. Clients: ann and cara subscribe with wildcards
# (cara connects mid-stream, ann unsubscribes mid-stream), bob hangs up in
# the middle of the traffic, snail stops reading and is disconnected as a
# slow consumer, pub1 publishes (a burst of big messages among them), and
# late uploads while the server has no slot for it: its upload times out
# while it is blocked in drain().
import asyncio
import socket

from probe import d, log, restart

HOST = "127.0.0.1"
MAX_CLIENTS = 4
ADMIT_WAIT = 0.3
OUT_QUEUE = 8
HIGH_WATER = 4096
SNDBUF = 16384
SLOW_DEADLINE = 0.1
SWEEP_FIRST, SWEEP_EVERY = 0.21, 0.3
BURST, BIG = 24, 30000
SHUTDOWN_AT = 1.47

clients = {}  # name -> Client, in connection order
handlers = set()
slots = asyncio.Semaphore(MAX_CLIENTS)
published = {}  # subject -> count
stats = {"connections": 0, "turned away": 0, "slow": []}
delivered = {}  # name -> messages written, for clients that left cleanly


class Client:
    def __init__(self, name, writer):
        self.name = name
        self.writer = writer
        self.subs = []
        self.queue = asyncio.Queue(OUT_QUEUE)
        self.full_since = None
        self.sent = 0
        self.dropped = 0
        self.draining = False
        self.kicked = False
        self.pump = None


def valid(subject, wildcards):
    tokens = subject.split(".")
    for i, tok in enumerate(tokens):
        if not tok:
            return False
        if tok in ("*", ">") and not wildcards:
            return False
        if tok == ">" and i != len(tokens) - 1:
            return False
    return True


def matches(pattern, subject):
    pat, sub = pattern.split("."), subject.split(".")
    for i, tok in enumerate(pat):
        if tok == ">":
            return len(sub) > i
        if i >= len(sub) or (tok != "*" and tok != sub[i]):
            return False
    return len(pat) == len(sub)


def enqueue(c, line):
    try:
        c.queue.put_nowait(line)
        return True
    except asyncio.QueueFull:
        c.dropped += 1
        if c.full_since is None:
            c.full_since = asyncio.get_running_loop().time()
        return False
    except asyncio.QueueShutDown:
        return False


def publish(subject, payload):
    published[subject] = published.get(subject, 0) + 1
    matched = [c for c in clients.values() if any(matches(p, subject) for p in c.subs)]
    for c in matched:
        enqueue(c, f"MSG {subject} {payload}")
    return len(matched)


def command(c, parts):
    op, args = parts[0], parts[1:]
    if op == "PING" and not args:
        return "PONG"
    if op == "SUB" and len(args) == 1:
        if not valid(args[0], True):
            return f"-ERR invalid subject {args[0]}"
        c.subs.append(args[0])
        return f"+OK sub {args[0]}"
    if op == "UNSUB" and len(args) == 1:
        if args[0] not in c.subs:
            return f"-ERR not subscribed {args[0]}"
        c.subs.remove(args[0])
        return f"+OK unsub {args[0]}"
    if op == "PUB" and len(args) == 2:
        if not valid(args[0], False):
            return f"-ERR invalid subject {args[0]}"
        return f"+OK {publish(args[0], args[1])}"
    if op == "PUB":
        return "-ERR usage: PUB subject payload"
    return f"-ERR unknown command {op}"


async def pump(c):
    try:
        while True:
            try:
                line = await c.queue.get()
            except asyncio.QueueShutDown:
                break
            c.full_since = None
            c.writer.write(line.encode() + b"\n")
            c.sent += 1
            c.draining = True
            await c.writer.drain()
            c.draining = False
    except asyncio.CancelledError:
        log("server:", c.name, "pump cancelled, waiting in drain:", c.draining)
        raise
    except ConnectionError as e:
        log("server:", c.name, "pump lost the connection:", d(e))
    c.writer.close()


def kick(c):
    c.kicked = True
    stats["slow"].append(c.name)
    log("server:", c.name, "is a slow consumer, dropped", c.dropped > 0, "; disconnecting")
    c.pump.cancel()
    c.writer.write(b"-ERR slow consumer\n")
    c.writer.close()


async def sweeper():
    loop = asyncio.get_running_loop()
    tick = SWEEP_FIRST
    while True:
        await sleep_until(tick)
        for c in list(clients.values()):
            if not c.kicked and c.full_since is not None and loop.time() - c.full_since >= SLOW_DEADLINE:
                kick(c)
        tick += SWEEP_EVERY


async def session(reader, writer):
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
    writer.transport.set_write_buffer_limits(high=HIGH_WATER)
    parts = (await reader.readline()).decode().split()
    if len(parts) != 2 or parts[0] != "CONNECT":
        log("server: expected CONNECT, got", parts)
        writer.write(b"-ERR expected CONNECT\n")
        writer.close()
        return
    c = Client(parts[1], writer)
    clients[c.name] = c
    log("server:", c.name, "connected,", len(clients), "clients")
    c.pump = asyncio.create_task(pump(c))
    enqueue(c, f"+OK welcome {c.name}")
    reason = "hung up"
    try:
        async for line in reader:
            parts = line.decode().split()
            if not parts:
                continue
            if parts == ["QUIT"]:
                reason = "quit"
                enqueue(c, "+OK bye")
                break
            reply = command(c, parts)
            if reply.startswith("-ERR"):
                log("server:", c.name, "sent", line.decode().strip()[:40], "->", reply)
            enqueue(c, reply)
    except ConnectionError as e:
        reason = d(e)
    del clients[c.name]
    if c.kicked:
        reason = "kicked"
    else:
        c.queue.shutdown()
        delivered[c.name] = c.sent
    await asyncio.gather(c.pump, return_exceptions=True)
    log("server:", c.name, "gone:", reason, "subs", c.subs)


async def handle(reader, writer):
    handlers.add(asyncio.current_task())
    stats["connections"] += 1
    try:
        try:
            async with asyncio.timeout(ADMIT_WAIT):
                await slots.acquire()
        except TimeoutError:
            stats["turned away"] += 1
            log("server: no slot for", ADMIT_WAIT, "s, turning a connection away")
            writer.write(b"-ERR server busy\n")
            writer.close()
            return
        try:
            await session(reader, writer)
        finally:
            slots.release()
    finally:
        handlers.discard(asyncio.current_task())


async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


async def open_client(name, at, port):
    await sleep_until(at)
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"CONNECT {name}\n".encode())
    return reader, writer


async def listen(name, reader, counts):
    async for line in reader:
        text = line.decode().strip()
        if text.startswith("MSG news.bulk "):
            counts["bulk"] += 1
            continue
        if text.startswith("MSG "):
            counts["msgs"] += 1
        log(name, "<-", text)
    log(name, "connection closed")


async def subscriber(name, at, port, script):
    reader, writer = await open_client(name, at, port)
    counts = {"msgs": 0, "bulk": 0}
    listener = asyncio.create_task(listen(name, reader, counts))
    for when, cmd in script:
        await sleep_until(when)
        if cmd == "HANGUP":
            log(name, "hangs up")
            writer.close()
            break
        writer.write(cmd.encode() + b"\n")
    await listener
    writer.close()
    await writer.wait_closed()
    return f"{name} {counts}"


async def snail(port):
    reader, writer = await open_client("snail", 0.26, port)
    writer.write(b"SUB news.>\n")
    for _ in range(2):
        log("snail <-", (await reader.readline()).decode().strip())
    writer.transport.pause_reading()
    log("snail: busy, stops reading")
    await sleep_until(1.21)
    writer.transport.resume_reading()
    lines = [line.decode().strip() async for line in reader]
    log("snail: resumed, read news:", lines[0].startswith("MSG news."), "last:", lines[-1])
    writer.close()
    await writer.wait_closed()
    return "snail read to the end"


async def publisher(port):
    reader, writer = await open_client("pub1", 0.29, port)
    log("pub1 <-", (await reader.readline()).decode().strip())

    async def request(line):
        writer.write(line.encode() + b"\n")
        await writer.drain()
        return (await reader.readline()).decode().strip()

    burst = None
    script = [
        (0.31, "PUB metrics.cpu 17"), (0.36, "PUB news.sports goal"), (0.38, "PUB metrics.mem 512"),
        (0.40, "PUB news.weather rain"), (0.46, "PUB news 0"), (0.48, "PUB news.* 1"),
        (0.50, "PING"), (0.52, "BURST"), (0.86, "PUB metrics.cpu 55"), (0.91, "PUB news.sports score"),
        (1.01, "PUB metrics.cpu 61"), (1.09, "PUB news.sports final"), (1.19, "PING"),
        (1.26, "PUB onlysubject"), (1.37, "PUB news.late bye"),
    ]
    for when, cmd in script:
        await sleep_until(when)
        if cmd == "BURST":
            burst = [await request(f"PUB news.bulk {'b' * BIG}") for _ in range(BURST)]
            continue
        if burst:
            log("pub1: the burst of", BURST, "got", sorted(set(burst)))
            burst = None
        log("pub1:", cmd, "->", await request(cmd))
    async for line in reader:
        log("pub1: then", line.decode().strip())
    writer.close()
    await writer.wait_closed()
    return "pub1 done"


async def late(port):
    reader, writer = await open_client("late", 0.37, port)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
    writer.transport.set_write_buffer_limits(high=HIGH_WATER)
    sent, waiting = 0, False
    try:
        async with asyncio.timeout(0.2):
            for _ in range(200):
                writer.write(f"PUB logs.raw {'x' * BIG}\n".encode())
                waiting = True
                await writer.drain()
                waiting = False
                sent += 1
    except TimeoutError:
        log("late: upload timed out, blocked in drain:", waiting, "sent all:", sent == 200)
    writer.transport.abort()
    return "late gave up"


async def shutdown(server, sweep):
    log("server: shutting down,", len(clients), "clients", list(clients))
    server.close()
    sweep.cancel()
    for c in clients.values():
        enqueue(c, "-ERR server shutting down")
        c.queue.shutdown()
    done, pending = await asyncio.wait(list(handlers), timeout=0.3)
    log("server: handlers finished", len(done), "still running", len(pending))
    await server.wait_closed()
    log("server: closed")


async def main():
    global T0
    restart()
    T0 = asyncio.get_running_loop().time()
    server = await asyncio.start_server(handle, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    sweep = asyncio.create_task(sweeper())
    tasks = [
        asyncio.create_task(subscriber("ann", 0.01, port, [
            (0.06, "SUB news.>"), (0.09, "SUB metrics.*"), (0.96, "UNSUB metrics.*"),
            (1.06, "UNSUB foo.bar"), (1.12, "SUB bad..subject"), (1.31, "PING")])),
        asyncio.create_task(subscriber("bob", 0.12, port, [
            (0.16, "SUB news.sports"), (0.19, "SUB *.cpu"), (0.22, "SUB news.>.x"),
            (0.71, "HANGUP")])),
        asyncio.create_task(snail(port)),
        asyncio.create_task(publisher(port)),
        asyncio.create_task(late(port)),
        asyncio.create_task(subscriber("cara", 0.76, port, [
            (0.77, "SUB news.*"), (0.78, "SUB metrics.>"), (1.16, "FETCH news")])),
    ]
    await sleep_until(SHUTDOWN_AT)
    await shutdown(server, sweep)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for r in results:
        log("client:", d(r) if isinstance(r, BaseException) else r)
    log("stats:", stats["connections"], "connections,", stats["turned away"], "turned away, slow:", stats["slow"])
    log("published:", sorted(published.items()))
    log("delivered:", sorted(delivered.items()))


asyncio.run(main())
