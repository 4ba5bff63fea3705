# A UDP request/response client with retries: each request carries an id,
# the client waits for the reply with wait_for on a future the protocol
# resolves by id, and resends after a timeout, up to three attempts; the
# server drops the first copy of some requests and answers others slowly,
# so a late reply to an earlier attempt arrives after the retry was sent
# and is ignored as a duplicate.
import asyncio

from probe import d, log, restart


class Server(asyncio.DatagramProtocol):
    def __init__(self):
        self.seen = {}

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        rid, cmd = data.decode().split(" ", 1)
        n = self.seen[rid] = self.seen.get(rid, 0) + 1
        if cmd == "drop-once" and n == 1:
            log("server: drops", rid)
            return
        if cmd == "never":
            log("server: ignores", rid, "attempt", n)
            return
        delay = 0.25 if cmd == "slow" and n == 1 else 0.02
        asyncio.get_running_loop().call_later(
            delay, self.transport.sendto, f"{rid} {cmd.upper()} #{n}".encode(), addr)


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.waiting = {}
        self.dups = 0

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        rid, reply = data.decode().split(" ", 1)
        fut = self.waiting.get(rid)
        if fut is None or fut.done():
            self.dups += 1
            log("client: duplicate or late reply", rid, reply)
            return
        fut.set_result(reply)

    def error_received(self, exc):
        log("client: error_received", d(exc))

    async def request(self, rid, cmd, timeout=0.1, attempts=3):
        fut = asyncio.get_running_loop().create_future()
        self.waiting[rid] = fut
        for attempt in range(1, attempts + 1):
            self.transport.sendto(f"{rid} {cmd}".encode())
            try:
                return await asyncio.wait_for(asyncio.shield(fut), timeout)
            except TimeoutError:
                log("client:", rid, "attempt", attempt, "timed out")
        fut.cancel()
        raise TimeoutError(f"{rid} gave up after {attempts} attempts")


async def main():
    restart()
    loop = asyncio.get_running_loop()
    stransport, server = await loop.create_datagram_endpoint(Server, local_addr=("127.0.0.1", 0))
    addr = stransport.get_extra_info("sockname")
    ctransport, client = await loop.create_datagram_endpoint(Client, remote_addr=addr)

    async def call(rid, cmd, gap):
        await asyncio.sleep(gap)
        try:
            log("result", rid, await client.request(rid, cmd))
        except TimeoutError as e:
            log("failed", rid, d(e))

    async with asyncio.TaskGroup() as tg:
        tg.create_task(call("r1", "ping", 0))
        tg.create_task(call("r2", "drop-once", 0.01))
        tg.create_task(call("r3", "slow", 0.02))
        tg.create_task(call("r4", "never", 0.03))
    await asyncio.sleep(0.3)
    log("duplicates", client.dups, "seen", sorted(server.seen.items()))
    ctransport.close()
    stransport.close()
    await asyncio.sleep(0)
    log("closed", ctransport.is_closing(), stransport.is_closing())


asyncio.run(main())
