# Pre-streams socket code ported as it is, on loop.sock_*: a listening
# non-blocking socket served with sock_accept, each connection echoed in
# upper case with sock_recv (small reads, so a message arrives in pieces)
# and sock_sendall; clients connect with sock_connect, half-close with
# shutdown(SHUT_WR) and read to EOF, one of them with sock_recv_into a
# bytearray. A sock_recv given up by wait_for leaves the socket usable:
# the next sock_recv gets what the peer sends later. sock_connect to a
# port nobody listens on raises ConnectionRefusedError; the accept loop,
# cancelled while it waits in sock_accept, ends cleanly.
import asyncio
import socket

from probe import d, log, restart


async def main():
    loop = asyncio.get_running_loop()
    restart()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen()
    lsock.setblocking(False)
    port = lsock.getsockname()[1]
    handlers = []

    async def echo(conn, i):
        pieces = 0
        with conn:
            while data := await loop.sock_recv(conn, 4):
                pieces += 1
                await loop.sock_sendall(conn, data.upper())
        log("server: conn", i, "EOF after", pieces, "pieces")

    async def accept_loop():
        i = 0
        try:
            while True:
                conn, addr = await loop.sock_accept(lsock)
                conn.setblocking(False)
                log("server: accepted", i, "from", addr[0])
                handlers.append(asyncio.create_task(echo(conn, i)))
                i += 1
        except asyncio.CancelledError:
            log("server: accept loop cancelled after", i)
            raise

    acceptor = asyncio.create_task(accept_loop())

    async def connect():
        sock = socket.socket()
        sock.setblocking(False)
        await loop.sock_connect(sock, ("127.0.0.1", port))
        return sock

    a = await connect()
    await loop.sock_sendall(a, b"hello, world")
    a.shutdown(socket.SHUT_WR)
    got = b""
    while chunk := await loop.sock_recv(a, 1024):
        got += chunk
    log("client a got", got)
    a.close()

    b = await connect()
    try:
        await asyncio.wait_for(loop.sock_recv(b, 100), 0.1)
    except TimeoutError:
        log("client b: nothing to read yet")
    await loop.sock_sendall(b, b"late")
    buf = bytearray(3)
    parts = []
    while len(parts) < 2:
        n = await loop.sock_recv_into(b, buf)
        parts.append(bytes(buf[:n]))
    log("client b got", parts)
    b.shutdown(socket.SHUT_WR)
    log("client b then", await loop.sock_recv(b, 100))
    b.close()

    c = socket.socket()
    c.setblocking(False)
    closed_port = port
    lsock2 = socket.socket()
    lsock2.bind(("127.0.0.1", 0))
    closed_port = lsock2.getsockname()[1]
    lsock2.close()
    try:
        await loop.sock_connect(c, ("127.0.0.1", closed_port))
    except ConnectionRefusedError as e:
        log("client c:", type(e).__name__)
    c.close()

    await asyncio.gather(*handlers)
    acceptor.cancel()
    await asyncio.gather(acceptor, return_exceptions=True)
    lsock.close()
    log("done, handlers", len(handlers))


asyncio.run(main())
