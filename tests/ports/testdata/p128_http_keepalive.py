# An HTTP/1.1 keep-alive client and server over streams: the client
# pipelines requests on one connection and reads the responses in order
# (Content-Length bodies with readexactly, a chunked body with readline
# and readexactly, headers with readuntil on a tuple of separators, 3.13),
# the server closes a connection idle for too long and the client finds
# it at EOF and reconnects, "Connection: close" ends a connection, and a
# server that dies mid-response leaves the client an IncompleteReadError.
import asyncio

from probe import d, log, restart

IDLE = 0.3
conns = 0


async def serve(reader, writer):
    global conns
    conns += 1
    cid = f"c{conns}"
    log("server:", cid, "connected")
    served = 0
    try:
        while True:
            try:
                async with asyncio.timeout(IDLE):
                    head = await reader.readuntil(b"\r\n\r\n")
            except TimeoutError:
                log("server:", cid, "idle, closing after", served)
                break
            except asyncio.IncompleteReadError as e:
                log("server:", cid, "eof after", served, "partial", e.partial)
                break
            lines = head.decode().split("\r\n")
            method, path, _ = lines[0].split(" ")
            headers = dict(line.split(": ", 1) for line in lines[1:] if line)
            body = b""
            if "Content-Length" in headers:
                body = await reader.readexactly(int(headers["Content-Length"]))
            served += 1
            close = headers.get("Connection") == "close"
            if path == "/slow":
                await asyncio.sleep(0.1)
            if path == "/crash":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Le")
                await writer.drain()
                log("server:", cid, "crashes mid-response")
                writer.transport.abort()
                return
            if path == "/stream":
                writer.write(b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n")
                for part in (b"alpha", b"beta", b"gamma"):
                    writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
            else:
                payload = f"{method} {path} #{served} {body.decode()}".encode()
                extra = b"Connection: close\r\n" if close else b""
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (len(payload), extra) + payload)
            await writer.drain()
            if close:
                log("server:", cid, "closes on request after", served)
                break
    finally:
        writer.close()
        await writer.wait_closed()


class Client:
    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None
        self.opened = 0

    async def connect(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.opened += 1

    async def read_head(self):
        fields = []
        while True:
            line = await self.reader.readuntil((b"\r\n", b"\n"))
            line = line.rstrip(b"\r\n")
            if not line:
                return fields
            fields.append(line.decode())

    async def read_response(self):
        fields = await self.read_head()
        status = fields[0]
        headers = dict(f.split(": ", 1) for f in fields[1:])
        if headers.get("Transfer-Encoding") == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            body = b"|".join(parts)
        else:
            body = await self.reader.readexactly(int(headers["Content-Length"]))
        return status, body, headers.get("Connection") == "close"

    async def pipeline(self, reqs):
        if self.writer is None or self.reader.at_eof():
            if self.writer is not None:
                log("client: connection at EOF, reconnecting")
                self.writer.close()
                await self.writer.wait_closed()
            await self.connect()
        for method, path, body, close in reqs:
            head = f"{method} {path} HTTP/1.1\r\nHost: local\r\n"
            if body:
                head += f"Content-Length: {len(body)}\r\n"
            if close:
                head += "Connection: close\r\n"
            self.writer.write(head.encode() + b"\r\n" + body)
        await self.writer.drain()
        out = []
        for _ in reqs:
            status, body, close = await self.read_response()
            out.append((status, body))
            if close:
                self.writer.close()
                await self.writer.wait_closed()
                self.writer = None
                log("client: closed as the server asked")
        return out


async def main():
    restart()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = Client(port)

    got = await client.pipeline([("GET", "/a", b"", False), ("POST", "/b", b"hello", False),
                                 ("GET", "/stream", b"", False)])
    log("batch 1", got)
    await asyncio.sleep(0.1)
    log("slow", await client.pipeline([("GET", "/slow", b"", False)]))
    await asyncio.sleep(0.5)
    log("after idle", await client.pipeline([("GET", "/c", b"", False), ("GET", "/d", b"", True)]))
    log("connections opened", client.opened)
    try:
        await client.pipeline([("GET", "/crash", b"", False)])
    except asyncio.IncompleteReadError as e:
        log("client:", d(e), "partial", e.partial, "expected", e.expected)
    client.writer.close()
    await client.writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("server closed, connections", conns, "opened", client.opened)


asyncio.run(main())
