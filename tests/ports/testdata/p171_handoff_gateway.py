# A gateway accepts by hand and hands connections off: a listening
# socket served with sock_accept, each connection's routing header read
# with sock_recv and answered with sock_sendall, then the socket made a
# transport with loop.connect_accepted_socket and an upper-casing
# protocol; a rejected header is answered and closed. Then a backend
# created with create_server(start_serving=False) does not listen yet
# (a client is refused) until start_serving(); serve_forever() in
# a task, called a second time, raises RuntimeError; cancelled, it
# closes the server and waits (wait_closed, 3.12+) until the client that
# is still connected leaves; a connection after that is refused.
import asyncio
import socket

from probe import d, log, restart


class Upper(asyncio.Protocol):
    def __init__(self, name):
        self.name = name

    def connection_made(self, tr):
        self.tr = tr
        log(self.name, "connection_made")

    def data_received(self, data):
        log(self.name, "data", data)
        self.tr.write(data.upper())

    def eof_received(self):
        log(self.name, "eof")

    def connection_lost(self, exc):
        log(self.name, "connection_lost", d(exc) if exc else None)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen()
    lsock.setblocking(False)
    port = lsock.getsockname()[1]
    handed = []

    async def gateway():
        n = 0
        while True:
            conn, _ = await loop.sock_accept(lsock)
            conn.setblocking(False)
            n += 1
            header = await loop.sock_recv(conn, 16)
            log("gateway: conn", n, "header", header)
            if header != b"ROUTE\n":
                await loop.sock_sendall(conn, b"no\n")
                conn.close()
                continue
            await loop.sock_sendall(conn, b"ok\n")
            tr, proto = await loop.connect_accepted_socket(lambda: Upper(f"h{n}"), conn)
            handed.append(tr)
            log("gateway: handed off", proto.name, "closing", tr.is_closing())

    gw = asyncio.create_task(gateway())

    async def client(name, header, body, pause):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(header)
        answer = await r.readline()
        log(name, "answer", answer)
        if answer == b"ok\n":
            await asyncio.sleep(pause)
            w.write(body)
            log(name, "echo", await r.readexactly(len(body)))
            w.write_eof()
        log(name, "then", await r.read())
        w.close()
        await w.wait_closed()

    await client("c1", b"ROUTE\n", b"abc", 0.1)
    await client("c2", b"SPAM\n", b"", 0)
    await asyncio.gather(client("c3", b"ROUTE\n", b"xyz", 0.17), client("c4", b"ROUTE\n", b"hi", 0.06))
    gw.cancel()
    await asyncio.gather(gw, return_exceptions=True)
    lsock.close()
    log("gateway cancelled, handed", len(handed), "all closing", all(t.is_closing() for t in handed))

    restart()
    srv = await loop.create_server(lambda: Upper("b"), "127.0.0.1", 0, start_serving=False)
    bport = srv.sockets[0].getsockname()[1]
    log("backend serving", srv.is_serving())
    try:
        await asyncio.open_connection("127.0.0.1", bport)
    except ConnectionRefusedError:
        log("refused before start_serving: not listening yet")
    await asyncio.sleep(0.1)
    await srv.start_serving()
    log("backend serving", srv.is_serving())
    r, w = await asyncio.open_connection("127.0.0.1", bport)
    w.write(b"early")
    log("early reply", await r.readexactly(5))
    forever = asyncio.create_task(srv.serve_forever())
    await asyncio.sleep(0.1)
    try:
        await srv.serve_forever()
    except RuntimeError as e:
        log("second serve_forever:", type(e).__name__, str(e).split(" is ")[1])
    forever.cancel()
    await asyncio.sleep(0.2)
    log("serve_forever still waiting", not forever.done(), "serving", srv.is_serving())
    w.close()
    await w.wait_closed()
    try:
        await forever
    except asyncio.CancelledError:
        log("serve_forever ended cancelled")
    try:
        await asyncio.open_connection("127.0.0.1", bport)
    except ConnectionRefusedError:
        log("backend refuses now")


asyncio.run(main())
