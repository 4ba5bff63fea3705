# A length-prefixed RPC client: each frame is a 4-byte big-endian length
# then "id:op:arg"; a reader task resolves the futures of pending requests
# by id as the replies come back out of order, a request that times out
# leaves its future to be dropped by the reader when its reply comes late,
# and a server that dies mid-frame leaves the reader an
# IncompleteReadError whose partial says how much of the frame came: every
# pending request fails with a ConnectionError.
import asyncio
import struct

from probe import d, log, restart

DELAYS = {"fast": 0.04, "slow": 0.3, "mid": 0.12, "late": 0.6}


async def serve(reader, writer):
    log("server: connected")

    async def answer(rid, op, arg):
        await asyncio.sleep(DELAYS[op])
        if op == "late" and arg == "die":
            body = f"{rid}:ok:{arg}".encode()
            writer.write(struct.pack(">I", len(body)) + body[:3])
            await writer.drain()
            log("server: dies mid-frame for", rid)
            writer.transport.abort()
            return
        body = f"{rid}:ok:{arg.upper()}".encode()
        writer.write(struct.pack(">I", len(body)) + body)
        await writer.drain()

    tasks = set()
    try:
        while True:
            head = await reader.readexactly(4)
            (n,) = struct.unpack(">I", head)
            rid, op, arg = (await reader.readexactly(n)).decode().split(":")
            log("server: request", rid, op, arg)
            t = asyncio.create_task(answer(int(rid), op, arg))
            tasks.add(t)
            t.add_done_callback(tasks.discard)
    except asyncio.IncompleteReadError as e:
        log("server: client gone, partial", e.partial)
    except ConnectionError as e:
        log("server: reading ended", d(e))


class RPC:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.pending = {}
        self.next_id = 1
        self.reader_task = asyncio.create_task(self.read_replies(), name="rpc-reader")

    async def read_replies(self):
        try:
            while True:
                head = await self.reader.readexactly(4)
                (n,) = struct.unpack(">I", head)
                rid, status, val = (await self.reader.readexactly(n)).decode().split(":")
                fut = self.pending.pop(int(rid), None)
                if fut is None:
                    log("reader: reply for", rid, "nobody waits for, dropped")
                elif fut.done():
                    log("reader: reply for", rid, "but its future is", "cancelled" if fut.cancelled() else "done")
                else:
                    fut.set_result(val)
        except asyncio.IncompleteReadError as e:
            log("reader:", d(e), "partial", e.partial, "expected", e.expected)
            err = ConnectionError(f"connection lost with {len(self.pending)} pending")
            for rid, fut in sorted(self.pending.items()):
                if not fut.done():
                    fut.set_exception(err)
            self.pending.clear()

    async def call(self, op, arg, timeout=None):
        rid = self.next_id
        self.next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        body = f"{rid}:{op}:{arg}".encode()
        self.writer.write(struct.pack(">I", len(body)) + body)
        await self.writer.drain()
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            log("call", rid, op, "timed out; pending still holds it:", rid in self.pending)
            raise


async def main():
    restart()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    rpc = RPC(reader, writer)

    async def one(op, arg, timeout=None):
        try:
            v = await rpc.call(op, arg, timeout)
            log("got", op, arg, "->", v)
        except Exception as e:
            log("failed", op, arg, d(e))

    await asyncio.gather(one("slow", "a"), one("fast", "b"), one("mid", "c"), one("slow", "d", timeout=0.2))
    log("pending after round 1", sorted(rpc.pending))
    await asyncio.sleep(0.2)
    log("pending after the late reply", sorted(rpc.pending))
    await asyncio.gather(one("late", "die"), one("slow", "e"), one("fast", "f"))
    await rpc.reader_task
    log("reader done", rpc.reader_task.result(), "pending", rpc.pending)
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("closed")


asyncio.run(main())
