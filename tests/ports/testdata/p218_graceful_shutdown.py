# A server's graceful shutdown: stop accepting (server.close(), a new
# client is refused), close the idle keep-alive connections, drain the
# requests in flight with a deadline (asyncio.wait with a timeout), cancel
# the ones still running (they answer 503), wait for the connections to
# end (wait_closed), and report the counts.
import asyncio

from probe import d, log, restart


class Server:
    def __init__(self):
        self.inflight = {}  # an ordered set: cancelled in the order they came
        self.idle = set()
        self.stats = {"served": 0, "drained": 0, "cancelled": 0}
        self.shutting_down = False

    async def process(self, rid, dur):
        await asyncio.sleep(dur)
        return f"200 {rid}"

    async def handle(self, reader, writer):
        while True:
            self.idle.add(writer)
            line = await reader.readline()
            self.idle.discard(writer)
            if not line:
                break
            _, rid, dur = line.decode().split()
            task = asyncio.create_task(self.process(rid, float(dur)))
            self.inflight[task] = None
            try:
                reply = await task
                self.stats["drained" if self.shutting_down else "served"] += 1
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                reply = f"503 {rid}"
                self.stats["cancelled"] += 1
            finally:
                self.inflight.pop(task, None)
            writer.write(f"{reply}\n".encode())
            await writer.drain()
            if self.shutting_down:
                break
        writer.close()
        await writer.wait_closed()

    async def shutdown(self, srv, grace):
        log("shutdown: stop accepting,", len(self.inflight), "in flight,", len(self.idle), "idle")
        self.shutting_down = True
        srv.close()
        for w in list(self.idle):
            w.close()
        if self.inflight:
            done, pending = await asyncio.wait(set(self.inflight), timeout=grace)
            log("shutdown: drained", len(done), "still running", len(pending))
            for t in [t for t in self.inflight if t in pending]:
                t.cancel()
        await srv.wait_closed()
        log("shutdown: all connections closed", self.stats)


async def client(port, name, dur, delay=0):
    await asyncio.sleep(delay)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        log(name, "refused")
        return
    if dur is not None:
        writer.write(f"REQ {name} {dur}\n".encode())
    line = await reader.readline()
    log(name, "got", line.decode().strip() or "EOF")
    writer.close()
    await writer.wait_closed()


async def main():
    restart()
    app = Server()
    srv = await asyncio.start_server(app.handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    clients = [asyncio.create_task(client(port, f"c{i}", dur))
               for i, dur in enumerate([0.1, 0.28, 0.66, 0.9])]
    clients.append(asyncio.create_task(client(port, "idle", None)))
    await asyncio.sleep(0.2)
    stopper = asyncio.create_task(app.shutdown(srv, grace=0.3))
    clients.append(asyncio.create_task(client(port, "late", 0.1, delay=0.06)))
    await asyncio.gather(*clients)
    await stopper
    log("main done")


asyncio.run(main())
