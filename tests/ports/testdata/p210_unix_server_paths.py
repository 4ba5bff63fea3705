# create_unix_server and what is at its path: a regular file there is
# left alone and the bind fails (OSError EADDRINUSE); a stale socket file
# is replaced; when the file is removed behind a running server's back,
# closing the server does not fail, and a client then finds nothing
# (FileNotFoundError); cleanup_socket=False leaves the file at close.
import asyncio
import errno
import os
import socket
import tempfile

from probe import log, restart


async def main():
    restart()
    d = tempfile.mkdtemp()
    path = os.path.join(d, "svc.sock")

    async def answer(reader, writer):
        writer.write(b"ok\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    with open(path, "w") as f:
        f.write("not a socket")
    try:
        await asyncio.start_unix_server(answer, path)
    except OSError as e:
        log("over a regular file:", type(e).__name__, errno.errorcode[e.errno])
    with open(path) as f:
        log("file kept:", f.read())
    os.remove(path)

    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()
    server = await asyncio.start_unix_server(answer, path)
    r, w = await asyncio.open_unix_connection(path)
    log("over a stale socket file: client got", await r.readline())
    w.close()
    await w.wait_closed()
    await asyncio.sleep(0.1)
    os.remove(path)
    try:
        await asyncio.open_unix_connection(path)
    except FileNotFoundError as e:
        log("file removed, client:", type(e).__name__)
    server.close()
    await server.wait_closed()
    log("server closed without its file")

    server = await asyncio.start_unix_server(answer, path, cleanup_socket=False)
    server.close()
    await server.wait_closed()
    log("cleanup_socket=False, file left:", os.path.exists(path))
    os.remove(path)
    os.rmdir(d)
    log("done")


asyncio.run(main())
