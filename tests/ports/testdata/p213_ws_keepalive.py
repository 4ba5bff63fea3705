# A websockets-like connection with keepalive: a ping every
# ping_interval, the pong awaited for ping_timeout, and a missing pong
# closing the connection with code 1011; the close handshake (send CLOSE
# with a code, wait for the peer's CLOSE) for a normal end; the reader
# task and the keepalive task run in a TaskGroup, and the failure comes
# out of it as an ExceptionGroup handled with except*.
import asyncio

from probe import d, log, restart


class ConnectionClosed(Exception):
    def __init__(self, code, reason):
        super().__init__(f"{code} {reason}")
        self.code = code


async def ws_server(reader, writer):
    frozen = False
    while True:
        line = await reader.readline()
        if not line:
            log("server: connection dropped")
            break
        kind, _, rest = line.decode().strip().partition(" ")
        if kind == "PING" and not frozen:
            writer.write(f"PONG {rest}\n".encode())
        elif kind == "TEXT":
            if rest == "freeze":
                frozen = True
                log("server: stops answering pings")
            writer.write(f"TEXT echo:{rest}\n".encode())
        elif kind == "CLOSE":
            log("server: got close", rest)
            writer.write(f"CLOSE {rest.split()[0]} ok\n".encode())
            break
    writer.close()
    await writer.wait_closed()


class WSClient:
    def __init__(self, name, reader, writer, ping_interval, ping_timeout):
        self.name, self.reader, self.writer = name, reader, writer
        self.ping_interval, self.ping_timeout = ping_interval, ping_timeout
        self.pongs = {}
        self.n = 0

    def send(self, *parts):
        self.writer.write((" ".join(map(str, parts)) + "\n").encode())

    async def read_loop(self):
        while True:
            line = await self.reader.readline()
            if not line:
                raise ConnectionClosed(1006, "abnormal closure")
            kind, _, rest = line.decode().strip().partition(" ")
            if kind == "PONG":
                fut = self.pongs.pop(int(rest), None)
                if fut is not None and not fut.done():
                    fut.set_result(None)
            elif kind == "TEXT":
                log(self.name, "recv", rest)
            elif kind == "CLOSE":
                code, _, reason = rest.partition(" ")
                log(self.name, "peer closed", code, reason)
                return int(code)

    async def keepalive(self):
        while True:
            await asyncio.sleep(self.ping_interval)
            self.n += 1
            fut = asyncio.get_running_loop().create_future()
            self.pongs[self.n] = fut
            self.send("PING", self.n)
            try:
                async with asyncio.timeout(self.ping_timeout):
                    await fut
            except TimeoutError:
                log(self.name, "pong", self.n, "timed out")
                self.send("CLOSE", 1011, "keepalive ping timeout")
                self.writer.close()
                raise ConnectionClosed(1011, "keepalive ping timeout") from None
            log(self.name, "pong", self.n)


async def session(name, port, script):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    ws = WSClient(name, reader, writer, ping_interval=0.2, ping_timeout=0.1)
    try:
        async with asyncio.TaskGroup() as tg:
            rt = tg.create_task(ws.read_loop())
            ka = tg.create_task(ws.keepalive())
            for delay, msg in script:
                await asyncio.sleep(delay)
                ws.send("TEXT", msg)
            ws.send("CLOSE", 1000, "bye")
            log(name, "sent close 1000")
            code = await rt
            ka.cancel()
            writer.close()
            await writer.wait_closed()
        log(name, "closed cleanly with", code)
    except* ConnectionClosed as eg:
        log(name, "closed with", [e.code for e in eg.exceptions], d(eg.exceptions[0]))
    log(name, "pending pongs", sorted(ws.pongs), "keepalive cancelled", ka.cancelled())


async def main():
    restart()
    server = await asyncio.start_server(ws_server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    await session("s1", port, [(0.07, "hello"), (0.3, "world")])
    await session("s2", port, [(0.09, "freeze"), (0.5, "never sent")])
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
