# A request multiplexer over one stream connection, as database and RPC
# drivers write it: requests carry ids ("<id> <op> <arg>\n"), the server
# answers out of order, one reader task routes each reply line to the
# future waiting for that id. A request given up by its caller (wait_for
# timeout) forgets its id, so its late reply is dropped; a reply for an id
# never sent is reported. When the server drops the connection, the reader
# sees EOF and fails every pending future with ConnectionError, and later
# requests fail at once without writing.
import asyncio

from probe import d, log, restart


async def handle(reader, writer):
    async def answer(rid, op, arg):
        await asyncio.sleep(float(arg))
        writer.write(f"{rid} {op.upper()}:{arg}\n".encode())

    pending = set()
    while line := await reader.readline():
        rid, op, arg = line.decode().split()
        if op == "die":
            log("server drops the connection")
            writer.transport.abort()
            break
        if op == "bogus":
            writer.write(b"999 ???\n")
            continue
        t = asyncio.create_task(answer(rid, op, arg))
        pending.add(t)
        t.add_done_callback(pending.discard)
    for t in pending:
        t.cancel()


class Mux:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.next_id = 1
        self.pending = {}
        self.closed = None
        self.router = asyncio.create_task(self.route())

    async def route(self):
        while line := await self.reader.readline():
            rid, reply = line.decode().split(" ", 1)
            fut = self.pending.pop(int(rid), None)
            if fut is None:
                log("mux drops reply for", rid, reply.strip())
            else:
                fut.set_result(reply.strip())
        self.closed = ConnectionError("connection lost")
        log("mux: EOF with", len(self.pending), "pending")
        for rid in sorted(self.pending):
            self.pending.pop(rid).set_exception(self.closed)

    async def request(self, op, arg):
        if self.closed:
            raise self.closed
        rid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        self.writer.write(f"{rid} {op} {arg}\n".encode())
        try:
            return await fut
        finally:
            self.pending.pop(rid, None)


async def main():
    restart()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    mux = Mux(reader, writer)

    async def call(op, arg, timeout=None):
        try:
            r = await asyncio.wait_for(mux.request(op, arg), timeout)
            log(op, arg, "->", r)
            return r
        except (ConnectionError, TimeoutError) as e:
            log(op, arg, "failed", d(e))
            return d(e)

    res = await asyncio.gather(call("a", "0.3"), call("b", "0.1"), call("c", "0.2"),
                               call("slow", "0.5", timeout=0.26))
    log("gathered", res, "pending", len(mux.pending))
    await asyncio.sleep(0.3)
    writer.write(b"0 bogus 0\n")
    await asyncio.sleep(0.04)
    calls = [asyncio.create_task(call(op, "0.4")) for op in ("x", "y")]
    await asyncio.sleep(0.07)
    writer.write(b"0 die 0\n")
    log("results", await asyncio.gather(*calls))
    await mux.router
    log("late request:", await call("z", "0.1"))
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("closed")


asyncio.run(main())
