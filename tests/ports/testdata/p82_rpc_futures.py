# An RPC client over a fake connection: each request gets a future from
# loop.create_future(), kept in a table by id; responses arrive from
# call_later callbacks, as a protocol's data_received would deliver them.
# An error response becomes set_exception(); a request that times out is
# cancelled by wait_for and dropped from the table, so its late response
# finds no future; a response delivered twice hits InvalidStateError; the
# connection's loss fails every pending future. Done callbacks report in
# the order they were added. (The program prints InvalidStateError's type
# only: its message is the C future's, which the pure-Python one, and the
# Go port, word differently -- docs/rules.md FUT-2, FUT-3.)
import asyncio

from probe import d, log, restart


class RemoteError(Exception):
    pass


class Client:
    def __init__(self, loop):
        self.loop = loop
        self.pending = {}
        self.next_id = 0

    def request(self, method, reply_after, reply):
        self.next_id += 1
        rid = self.next_id
        fut = self.loop.create_future()
        self.pending[rid] = fut
        fut.add_done_callback(lambda f: log("done cb", rid, outcome(f)))
        self.loop.call_later(reply_after, self.deliver, rid, reply)
        log("sent", rid, method)
        return rid, fut

    def deliver(self, rid, reply):
        fut = self.pending.pop(rid, None)
        if fut is None:
            log("late reply for", rid, "dropped")
            return
        if isinstance(reply, Exception):
            fut.set_exception(reply)
        else:
            fut.set_result(reply)

    def connection_lost(self, exc):
        log("connection lost, failing", sorted(self.pending))
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(exc)
        self.pending.clear()


def outcome(f):
    if f.cancelled():
        return "cancelled"
    if f.exception() is not None:
        return d(f.exception())
    return repr(f.result())


async def call(client, method, reply_after, reply, timeout):
    rid, fut = client.request(method, reply_after, reply)
    try:
        return await asyncio.wait_for(fut, timeout)
    except TimeoutError:
        client.pending.pop(rid, None)
        log("call", rid, "timed out, future cancelled", fut.cancelled())
        raise


async def main():
    restart()
    loop = asyncio.get_running_loop()
    c = Client(loop)
    log("ping ->", await call(c, "ping", 0.1, "pong", 1))
    try:
        await call(c, "div", 0.1, RemoteError("division by zero"), 1)
    except RemoteError as e:
        log("div failed", d(e))
    try:
        await call(c, "slow", 0.5, "late", 0.2)
    except TimeoutError:
        log("slow gave up")

    rid, fut = c.request("dup", 0.1, 42)
    try:
        fut.result()
    except asyncio.InvalidStateError as e:
        log("too early:", type(e).__name__)
    try:
        fut.exception()
    except asyncio.InvalidStateError as e:
        log("too early:", type(e).__name__)
    log("dup ->", await fut)
    try:
        fut.set_result(43)
    except asyncio.InvalidStateError as e:
        log("second reply:", type(e).__name__)
    g = loop.create_future()
    g.cancel("no longer needed")
    try:
        g.set_result(1)
    except asyncio.InvalidStateError as e:
        log("reply to cancelled:", type(e).__name__)
    try:
        g.result()
    except asyncio.CancelledError as e:
        log("result of cancelled:", d(e))

    _, f1 = c.request("a", 0.3, 1)
    _, f2 = c.request("b", 0.4, 2)
    await asyncio.sleep(0.17)
    loop.call_soon(c.connection_lost, ConnectionError("reset by peer"))
    res = await asyncio.gather(f1, f2, return_exceptions=True)
    log("gathered", [d(r) if isinstance(r, BaseException) else r for r in res])
    await asyncio.sleep(0.5)
    log("pending", c.pending)


asyncio.run(main())
