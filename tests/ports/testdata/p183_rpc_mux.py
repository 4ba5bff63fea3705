# An RPC framework multiplexing concurrent calls over one connection:
# length-prefixed frames (a 4-byte big-endian length, read with
# readexactly) carrying "KIND id fields...", request ids matching replies
# to calls, and a reader task resolving each call's future. Every call
# carries a deadline the server enforces (asyncio.timeout) a little before
# the client's own; the server runs each call as a task in the
# connection's TaskGroup and cancels it when the client sends CANCEL (the
# client does on its own timeout or when the caller is cancelled). The
# "transfer" handler shields its commit step, so a cancelled transfer
# still commits; "stall" cleans up slowly when cancelled, so its deadline
# passes on the server but the client's timeout sends CANCEL first (the
# server's timeout sees a second cancellation and does not turn it into
# TimeoutError); "fail" raises (an ERROR frame back). The server restarts
# at 0.52 s (close_clients): every pending call fails with ConnectionError
# and the client reconnects with exponential backoff, its callers waiting
# until it is back. Four callers share one client.
import asyncio

from probe import d, log, restart

HOST = "127.0.0.1"
MARGIN = 0.05  # the server's deadline is the client's timeout minus this
ledger = []


class RemoteError(Exception):
    pass


def send(writer, *fields):
    body = " ".join(str(f) for f in fields).encode()
    writer.write(len(body).to_bytes(4, "big") + body)


async def read_frame(reader):
    header = await reader.readexactly(4)
    body = await reader.readexactly(int.from_bytes(header, "big"))
    return body.decode().split(" ", 2)


# ---- server ----

async def commit(who):
    await asyncio.sleep(0.1)
    ledger.append(who)
    log("server: committed", who)


async def h_sleep(arg):
    await asyncio.sleep(float(arg))
    return f"slept {arg}"


async def h_transfer(arg):
    await asyncio.sleep(0.05)
    await asyncio.shield(commit(arg))
    return f"transferred {arg}"


async def h_stall(arg):
    try:
        await asyncio.sleep(float(arg))
    except asyncio.CancelledError:
        await asyncio.sleep(0.08)  # a slow cleanup: the reply is late
        raise
    return f"stalled {arg}"


async def h_fail(arg):
    await asyncio.sleep(0.01)
    raise ValueError(f"bad input {arg}")


HANDLERS = {"sleep": h_sleep, "transfer": h_transfer, "stall": h_stall, "fail": h_fail}


async def run_call(writer, calls, cid, method, arg, deadline):
    try:
        async with asyncio.timeout(float(deadline)):
            value = await HANDLERS[method](arg)
        send(writer, "RESULT", cid, value)
    except TimeoutError:
        log("server: call", cid, method, "missed its deadline")
        send(writer, "ERROR", cid, "DeadlineExceeded")
    except asyncio.CancelledError:
        log("server: call", cid, method, "cancelled")
        raise
    except Exception as e:
        log("server: call", cid, method, "failed:", d(e))
        send(writer, "ERROR", cid, f"{type(e).__name__}: {e}")
    finally:
        del calls[cid]


async def serve(reader, writer):
    calls = {}
    log("server: client connected")
    async with asyncio.TaskGroup() as tg:
        while True:
            try:
                kind, cid, rest = await read_frame(reader)
            except asyncio.IncompleteReadError as e:
                log("server: client gone (partial", len(e.partial), "bytes),", len(calls), "calls running")
                break
            if kind == "CALL":
                method, arg, deadline = rest.split()
                calls[cid] = tg.create_task(run_call(writer, calls, cid, method, arg, deadline))
            elif kind == "CANCEL":
                task = calls.get(cid)
                log("server: CANCEL", cid, f"({rest})", "running:", task is not None)
                if task is not None:
                    task.cancel()
        for task in list(calls.values()):
            task.cancel()
    writer.close()


# ---- client ----

class Client:
    def __init__(self, port):
        self.port = port
        self.next_id = 0
        self.pending = {}
        self.writer = None
        self.connected = asyncio.Event()
        self.closing = False
        self.tasks = set()

    def spawn(self, coro):
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def connect(self):
        delay = 0.05
        attempt = 1
        while True:
            try:
                reader, self.writer = await asyncio.open_connection(HOST, self.port)
                break
            except ConnectionRefusedError:
                log("client: attempt", attempt, "refused; retrying in", round(delay, 2))
                await asyncio.sleep(delay)
                delay *= 2
                attempt += 1
        log("client: connected on attempt", attempt)
        self.spawn(self.read_loop(reader))
        self.connected.set()

    async def read_loop(self, reader):
        try:
            while True:
                kind, cid, text = await read_frame(reader)
                fut = self.pending.pop(cid, None)
                if fut is None:
                    log("client: late", kind, "for call", cid, "dropped")
                elif kind == "RESULT":
                    fut.set_result(text)
                else:
                    fut.set_exception(RemoteError(text))
        except asyncio.IncompleteReadError:
            log("client: connection lost with", len(self.pending), "calls pending")
        self.connected.clear()
        for fut in self.pending.values():
            fut.set_exception(ConnectionError("connection lost"))
        self.pending.clear()
        self.writer.close()
        if not self.closing:
            self.spawn(self.connect())

    async def call(self, method, arg, timeout):
        await self.connected.wait()
        self.next_id += 1
        cid = str(self.next_id)
        fut = asyncio.get_running_loop().create_future()
        self.pending[cid] = fut
        send(self.writer, "CALL", cid, method, arg, round(timeout - MARGIN, 2))
        try:
            async with asyncio.timeout(timeout):
                return await fut
        except (TimeoutError, asyncio.CancelledError) as e:
            if self.pending.pop(cid, None) is not None:
                log("client: call", cid, "abandoned on", d(e), "-> CANCEL")
                send(self.writer, "CANCEL", cid, type(e).__name__)
            raise

    async def close(self):
        self.closing = True
        self.writer.close()
        await self.writer.wait_closed()
        await asyncio.gather(*self.tasks)


# ---- callers ----

async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


async def caller(client, name, script):
    done = 0
    for at, method, arg, timeout in script:
        await sleep_until(at)
        try:
            value = await client.call(method, arg, timeout)
            log(name, method, arg, "->", value)
            done += 1
        except (RemoteError, ConnectionError) as e:
            log(name, method, arg, "failed:", d(e))
        except TimeoutError:
            log(name, method, arg, "timed out after", timeout)
    return f"{name} {done}/{len(script)}"


SCRIPTS = {
    "alice": [(0.0, "sleep", 0.06, 1.0), (0.18, "transfer", "alice", 0.5),
              (0.33, "sleep", 0.4, 1.0), (0.58, "sleep", 0.03, 1.0), (1.0, "sleep", 0.02, 0.5)],
    "bob": [(0.01, "fail", 7, 0.5), (0.09, "sleep", 0.6, 0.25), (0.46, "transfer", "bob", 0.5)],
    "carol": [(0.03, "transfer", "carol", 0.11), (0.2, "stall", 0.5, 0.16), (0.44, "sleep", 0.3, 1.0)],
    "dave": [(0.06, "sleep", 0.2, 1.0), (0.27, "sleep", 1.0, 2.0)],
}


async def main():
    global T0
    restart()
    T0 = asyncio.get_running_loop().time()
    server = await asyncio.start_server(serve, HOST, 0)
    port = server.sockets[0].getsockname()[1]
    client = Client(port)
    await client.connect()
    callers = {name: asyncio.create_task(caller(client, name, s)) for name, s in SCRIPTS.items()}
    await sleep_until(0.42)
    log("main: cancelling dave")
    callers["dave"].cancel()
    await sleep_until(0.52)
    log("main: restarting the server,", len(client.pending), "calls pending")
    server.close()
    server.close_clients()
    await server.wait_closed()
    await sleep_until(0.73)
    server = await asyncio.start_server(serve, HOST, port)
    log("main: server back")
    results = await asyncio.gather(*callers.values(), return_exceptions=True)
    log("callers:", [d(r) if isinstance(r, BaseException) else r for r in results])
    await client.close()
    server.close()
    await server.wait_closed()
    log("ledger:", ledger, "pending:", len(client.pending))


asyncio.run(main())
