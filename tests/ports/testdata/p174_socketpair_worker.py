# A supervisor talks to its worker over a socketpair with length-
# prefixed frames, on the low-level socket API: the worker fills a fixed
# 4-byte header and then the body with sock_recv_into through memoryview
# slices (so a frame sent in pieces is reassembled), answers with one
# sock_sendall; the supervisor sends each frame in two pieces and reads
# the reply with sock_recv. Zero-length calls return at once (sock_recv
# of 0 bytes, sock_recv_into an empty buffer, sock_sendall of nothing);
# a sock_recv given up by wait_for loses nothing; a half header then
# shutdown(SHUT_WR) gives the worker an incomplete read; after the
# worker closes, sock_recv returns b'', and sock_sendall on the
# shut-down side raises BrokenPipeError.
import asyncio
import socket
import struct

from probe import d, log, restart


async def read_exact_into(loop, sock, view):
    got = 0
    while got < len(view):
        n = await loop.sock_recv_into(sock, view[got:])
        if n == 0:
            raise asyncio.IncompleteReadError(bytes(view[:got]), len(view))
        got += n
    return got


async def worker(loop, sock):
    header = bytearray(4)
    view = memoryview(header)
    handled = 0
    while True:
        try:
            await read_exact_into(loop, sock, view)
        except asyncio.IncompleteReadError as e:
            log("worker: EOF, partial", e.partial, "expected", e.expected, "handled", handled)
            break
        (n,) = struct.unpack("!I", header)
        body = bytearray(n)
        await read_exact_into(loop, sock, memoryview(body))
        log("worker: job", bytes(body))
        await asyncio.sleep(0.05)
        reply = bytes(body).upper()
        await loop.sock_sendall(sock, struct.pack("!I", len(reply)) + reply)
        handled += 1
    sock.close()


async def main():
    loop = asyncio.get_running_loop()
    restart()
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    w = asyncio.create_task(worker(loop, b))
    log("recv 0 bytes ->", await loop.sock_recv(a, 0))
    log("recv_into empty ->", await loop.sock_recv_into(a, bytearray(0)))
    log("sendall nothing ->", await loop.sock_sendall(a, b""))
    for job in (b"alpha", b"be", b"gamma-ray"):
        frame = struct.pack("!I", len(job)) + job
        await loop.sock_sendall(a, frame[:3])
        await asyncio.sleep(0.02)
        await loop.sock_sendall(a, frame[3:])
        head = await loop.sock_recv(a, 4)
        (n,) = struct.unpack("!I", head)
        log("supervisor: reply", await loop.sock_recv(a, n))
    try:
        await asyncio.wait_for(loop.sock_recv(a, 10), 0.1)
    except TimeoutError:
        log("supervisor: nothing unsolicited")
    await loop.sock_sendall(a, b"\x00\x00")
    a.shutdown(socket.SHUT_WR)
    await w
    log("supervisor: worker gone, recv ->", await loop.sock_recv(a, 10))
    try:
        await loop.sock_sendall(a, b"late")
    except BrokenPipeError as e:
        log("supervisor: send after shutdown", type(e).__name__)
    a.close()


asyncio.run(main())
