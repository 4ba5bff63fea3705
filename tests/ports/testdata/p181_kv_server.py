# A small Redis-like key-value server over a line protocol (start_server):
# GET/SET with an optional expiry (a call_later TimerHandle per key,
# cancelled when the key is overwritten or deleted), DEL, PING, QUIT, and
# SUBSCRIBE/PUBLISH channels where each subscriber has a bounded
# asyncio.Queue drained by a pusher task that waits for the client's ACK
# of each message: a subscriber whose queue is full is dropped, with a
# message. Each client has an idle timeout (asyncio.timeout rescheduled on
# every command, lifted while subscribed), the server takes at most
# MAX_CLIENTS (a Semaphore; one more is refused), and shutting down stops
# accepting, tells every client, waits a grace period for them to leave
# (wait_closed under a timeout) and then closes the rest (close_clients).
# Five scripted clients: alice sets, reads and publishes, bob and carol
# subscribe (carol acks too slowly and is dropped), dave sends malformed
# commands and hangs up in the middle of one, eve is refused, comes back
# and idles out.
import asyncio

from probe import d, log, restart

HOST = "127.0.0.1"
MAX_CLIENTS = 4
IDLE = 0.6
SUB_QUEUE = 2
GRACE = 0.3
SHUTDOWN_AT = 1.67

store = {}
expiries = {}  # key -> TimerHandle
channels = {}  # channel -> {name: Subscriber}
writers = set()
slots = asyncio.Semaphore(MAX_CLIENTS)


class Subscriber:
    def __init__(self, name, writer):
        self.name = name
        self.writer = writer
        self.queue = asyncio.Queue(SUB_QUEUE)
        self.acked = asyncio.Event()


def expire(key):
    del expiries[key]
    store.pop(key, None)
    log("server: key", key, "expired")


def forget(key):
    handle = expiries.pop(key, None)
    if handle is not None:
        handle.cancel()


def publish(channel, msg):
    delivered = 0
    for sub in list(channels.get(channel, {}).values()):
        try:
            sub.queue.put_nowait(msg)
            delivered += 1
        except asyncio.QueueFull:
            log("server:", sub.name, "too slow, dropped from", channel)
            del channels[channel][sub.name]
            sub.writer.write(b"-ERR slow consumer\n")
            sub.writer.close()
    return delivered


def execute(name, parts):
    loop = asyncio.get_running_loop()
    cmd, args = parts[0].upper(), parts[1:]
    arity = {"GET": (1, 1), "SET": (2, 4), "DEL": (1, 1), "PUBLISH": (2, 2), "PING": (0, 0)}
    if cmd not in arity:
        return f"-ERR unknown command '{parts[0]}'"
    lo, hi = arity[cmd]
    if not lo <= len(args) <= hi or (cmd == "SET" and len(args) == 3):
        return f"-ERR wrong number of arguments for '{cmd}'"
    if cmd == "PING":
        return "+PONG"
    if cmd == "GET":
        value = store.get(args[0])
        return "$nil" if value is None else f"${value}"
    if cmd == "SET":
        key, value = args[0], args[1]
        ttl = None
        if len(args) == 4:
            if args[2].upper() != "EX":
                return "-ERR syntax error"
            try:
                ttl = float(args[3])
            except ValueError:
                return "-ERR invalid expire time"
        forget(key)
        store[key] = value
        if ttl is not None:
            expiries[key] = loop.call_later(ttl, expire, key)
        return "+OK"
    if cmd == "DEL":
        forget(args[0])
        return f":{1 if store.pop(args[0], None) is not None else 0}"
    return f":{publish(args[0], args[1])}"


async def push(sub):
    while True:
        msg = await sub.queue.get()
        sub.writer.write(f"MSG {msg}\n".encode())
        await sub.acked.wait()
        sub.acked.clear()


async def subscribed(name, channel, reader, writer):
    sub = Subscriber(name, writer)
    channels.setdefault(channel, {})[name] = sub
    writer.write(f"+SUBSCRIBED {channel} {len(channels[channel])}\n".encode())
    async with asyncio.TaskGroup() as tg:
        pusher = tg.create_task(push(sub))
        async for line in reader:
            if line.strip() == b"ACK":
                sub.acked.set()
        pusher.cancel()
    channels[channel].pop(name, None)
    log("server:", name, "left", channel, "with", sub.queue.qsize(), "unsent")


async def session(reader, writer):
    loop = asyncio.get_running_loop()
    name = "?"
    try:
        async with asyncio.timeout(IDLE) as idle:
            while True:
                line = await reader.readline()
                if not line:
                    log("server:", name, "disconnected")
                    return
                if not line.endswith(b"\n"):
                    log("server:", name, "disconnected mid-command", line)
                    return
                idle.reschedule(loop.time() + IDLE)
                parts = line.decode().split()
                if not parts:
                    continue
                if parts[0] == "HELLO" and len(parts) == 2:
                    name = parts[1]
                    log("server: hello from", name, f"({len(writers)} connected)")
                    writer.write(f"+HELLO {name}\n".encode())
                elif parts[0] == "QUIT":
                    writer.write(b"+BYE\n")
                    log("server:", name, "quits")
                    return
                elif parts[0] == "SUBSCRIBE" and len(parts) == 2:
                    idle.reschedule(None)
                    await subscribed(name, parts[1], reader, writer)
                    return
                else:
                    reply = execute(name, parts)
                    if reply.startswith("-"):
                        log("server:", name, "sent", line, "->", reply)
                    writer.write(reply.encode() + b"\n")
    except TimeoutError:
        log("server:", name, "idle for", IDLE, "s, closing")
        writer.write(b"-ERR idle timeout\n")


async def handle(reader, writer):
    if slots.locked():
        log("server: refusing a connection,", len(writers), "connected")
        writer.write(b"-ERR max clients\n")
        writer.close()
        return
    async with slots:
        writers.add(writer)
        try:
            await session(reader, writer)
        finally:
            writers.discard(writer)
            writer.close()
            await writer.wait_closed()


async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


async def connect(name, at, port):
    await sleep_until(at)
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(f"HELLO {name}\n".encode())
    log(name, "<-", (await reader.readline()).decode().strip())
    return reader, writer


async def alice(port):
    reader, writer = await connect("alice", 0.02, port)
    script = [
        (0.17, "SET a 1 EX 0.25"), (0.22, "GET a"), (0.27, "PUBLISH news m1"),
        (0.37, "PUBLISH news m2"), (0.47, "PUBLISH news m3"), (0.57, "PUBLISH news m4"),
        (0.62, "GET a"), (0.67, "SET b 2 EX 0.3"), (0.77, "SET b 3"), (1.02, "GET b"),
        (1.06, "DEL b"), (1.08, "DEL b"), (1.17, "SET c 9 EX 5"), (1.27, "PING"),
        (1.57, "PING"), (1.87, "PING"),
    ]
    for at, cmd in script:
        await sleep_until(at)
        writer.write(cmd.encode() + b"\n")
        reply = (await reader.readline()).decode().strip()
        log("alice:", cmd, "->", reply)
        if reply == "SHUTDOWN":
            log("alice: server going down; quitting")
            writer.write(b"QUIT\n")
            break
    async for line in reader:
        log("alice: then", line.decode().strip())
    writer.close()
    await writer.wait_closed()
    return "alice done"


async def subscriber(name, at, port, ack_delay):
    loop = asyncio.get_running_loop()
    reader, writer = await connect(name, at, port)
    writer.write(b"SUBSCRIBE news\n")
    closed = False
    got = 0

    def ack(msg):
        if closed:
            log(name, "ack of", msg, "skipped: connection closed")
            return
        writer.write(b"ACK\n")

    async for line in reader:
        text = line.decode().strip()
        log(name, "<-", text)
        if text.startswith("MSG "):
            got += 1
            loop.call_later(ack_delay, ack, text.split()[1])
    closed = True
    log(name, "connection closed by the server")
    writer.close()
    await writer.wait_closed()
    return f"{name} got {got}"


async def dave(port):
    reader, writer = await connect("dave", 0.08, port)
    for at, cmd in [(0.11, b"FROB x\n"), (0.13, b"SET onlykey\n"), (0.19, b"SET k v EX soon\n")]:
        await sleep_until(at)
        writer.write(cmd)
        log("dave:", cmd, "->", (await reader.readline()).decode().strip())
    await sleep_until(0.31)
    writer.write(b"GET parti")
    log("dave: hangs up mid-command")
    writer.close()
    await writer.wait_closed()
    return "dave gone"


async def eve(port):
    await sleep_until(0.09)
    reader, writer = await asyncio.open_connection(HOST, port)
    log("eve: first try <-", (await reader.readline()).decode().strip(), "eof:", await reader.read() == b"")
    writer.close()
    await writer.wait_closed()
    reader, writer = await connect("eve", 0.87, port)
    writer.write(b"GET a\n")
    log("eve: GET a ->", (await reader.readline()).decode().strip())
    async for line in reader:
        log("eve: then", line.decode().strip())
    log("eve: disconnected")
    writer.close()
    return "eve idled out"


async def shutdown(server):
    log("server: shutting down,", len(writers), "clients,", len(expiries), "expiries pending")
    server.close()
    for key in list(expiries):
        forget(key)
    for writer in writers:
        writer.write(b"SHUTDOWN\n")
    try:
        async with asyncio.timeout(GRACE):
            await server.wait_closed()
        log("server: every client left")
    except TimeoutError:
        log("server: grace over,", len(writers), "still connected; closing them")
        server.close_clients()
        await server.wait_closed()
    log("server: closed, serving:", server.is_serving())


async def main():
    global T0
    restart()
    T0 = asyncio.get_running_loop().time()
    server = await asyncio.start_server(handle, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    clients = [
        asyncio.create_task(alice(port)),
        asyncio.create_task(subscriber("bob", 0.04, port, 0.02)),
        asyncio.create_task(subscriber("carol", 0.06, port, 0.45)),
        asyncio.create_task(dave(port)),
        asyncio.create_task(eve(port)),
    ]
    await sleep_until(SHUTDOWN_AT)
    await shutdown(server)
    results = await asyncio.gather(*clients, return_exceptions=True)
    log("clients:", [d(r) if isinstance(r, BaseException) else r for r in results])
    log("store:", sorted(store.items()), "channels:", {c: sorted(s) for c, s in channels.items()})


asyncio.run(main())
