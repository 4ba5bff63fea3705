# A server restarted on the port it had: start_server with
# reuse_address=True on an ephemeral port serves a client; a second
# server on the same port while the first listens fails with the address
# in use (errno EADDRINUSE, the message naming the address); after the
# first closes, with the server side of the connection in TIME_WAIT (the
# server closed first), a new server with reuse_address=True binds the
# same port at once and serves again.
import asyncio
import errno

from probe import log, restart


async def main():
    restart()
    served = []

    async def handle(reader, writer):
        name = (await reader.readline()).strip().decode()
        served.append(name)
        writer.write(f"hi {name}\n".encode())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    s1 = await asyncio.start_server(handle, "127.0.0.1", 0, reuse_address=True)
    port = s1.sockets[0].getsockname()[1]
    log("first server up")
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"ann\n")
    log("client got", await r.readline(), "then", await r.read())
    w.close()
    await w.wait_closed()

    try:
        await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True)
    except OSError as e:
        log("second server:", type(e).__name__, errno.errorcode[e.errno])
        log("message:", str(e).replace(str(port), "PORT"))

    await asyncio.sleep(0.1)
    s1.close()
    await s1.wait_closed()
    log("first server closed")
    s2 = await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True)
    log("restarted on the same port:", s2.sockets[0].getsockname()[1] == port)
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"bob\n")
    log("client got", await r.readline())
    w.close()
    await w.wait_closed()
    s2.close()
    await s2.wait_closed()
    log("served", served)


asyncio.run(main())
