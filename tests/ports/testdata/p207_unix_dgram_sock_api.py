# loop.sock_* on Unix datagram sockets: a server socket bound to a path
# answers with sock_recvfrom / sock_sendto to the sender's path; a bound
# client reads its replies with sock_recvfrom_into (nbytes limiting the
# read); an unbound sender's address is None, so it cannot be answered;
# sock_sendto to a path where nothing is bound raises FileNotFoundError.
import asyncio
import os
import socket
import tempfile

from probe import log, restart


async def main():
    loop = asyncio.get_running_loop()
    restart()
    d = tempfile.mkdtemp()
    spath, cpath = os.path.join(d, "srv"), os.path.join(d, "cli")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(spath)
    srv.setblocking(False)

    async def serve():
        while True:
            data, addr = await loop.sock_recvfrom(srv, 64)
            who = None if not addr else os.path.basename(addr)
            log("server: got", data, "from", who)
            if data == b"quit":
                return
            if who is not None:
                await asyncio.sleep(0.1)
                await loop.sock_sendto(srv, b"re: " + data, addr)

    server = asyncio.create_task(serve())
    cli = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    cli.bind(cpath)
    cli.setblocking(False)
    await loop.sock_sendto(cli, b"hello there", spath)
    buf = bytearray(16)
    n, addr = await loop.sock_recvfrom_into(cli, buf, 6)
    log("client: got", n, bytes(buf[:n]), "from", os.path.basename(addr))

    anon = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    anon.setblocking(False)
    await loop.sock_sendto(anon, b"who am i", spath)
    await asyncio.sleep(0.2)
    try:
        await loop.sock_sendto(anon, b"lost", os.path.join(d, "nobody"))
    except FileNotFoundError as e:
        log("send to nobody:", type(e).__name__)
    await loop.sock_sendto(cli, b"quit", spath)
    await server
    for s in (anon, cli, srv):
        s.close()
    for f in sorted(os.listdir(d)):
        os.remove(os.path.join(d, f))
    os.rmdir(d)
    log("done")


asyncio.run(main())
