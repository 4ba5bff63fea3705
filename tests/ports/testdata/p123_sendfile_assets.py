# A static asset server on loop.sendfile, as file servers write it: each
# request names a byte range, the server answers with a header line and
# then the range straight from the file (loop.sendfile on the stream's
# transport). The whole file, a range, a range starting past the end
# (nothing sent), and a negative offset (ValueError, answered as an
# error). While a sendfile is in progress the transport refuses
# writer.write() with RuntimeError; after it the file's position is just
# past what was sent. sendfile on a transport that is closing raises
# RuntimeError. The client checks every body against the file.
import asyncio
import os
import tempfile

from probe import d, log, restart

DATA = bytes(range(256)) * 4096


async def main():
    loop = asyncio.get_running_loop()
    restart()
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "asset.bin")
    with open(path, "wb") as f:
        f.write(DATA)
    done = asyncio.Event()

    async def serve(reader, writer):
        while line := await reader.readline():
            offset, count = line.decode().split()
            offset = int(offset)
            count = None if count == "-" else int(count)
            with open(path, "rb") as f:
                if offset < 0:
                    expect = 0
                else:
                    end = len(DATA) if count is None else min(len(DATA), offset + count)
                    expect = max(0, end - offset)
                writer.write(f"LEN {expect}\n".encode())
                await writer.drain()
                job = asyncio.create_task(loop.sendfile(writer.transport, f, offset, count))
                await asyncio.sleep(0)
                if not job.done():
                    try:
                        writer.write(b"interleaved")
                    except RuntimeError as e:
                        log("server: write during sendfile:", d(e))
                try:
                    sent = await job
                    log("server: sent", sent, "of", offset, count, "file position", f.tell())
                except ValueError as e:
                    log("server:", d(e))
        writer.close()
        with open(path, "rb") as f:
            try:
                await loop.sendfile(writer.transport, f)
            except RuntimeError as e:
                log("server: after close:", d(e))
        await writer.wait_closed()
        done.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.sockets[0].getsockname()[1])
    for offset, count in ((0, "-"), (1000, "5000"), (2000000, "10"), (len(DATA) - 7, "100"), (-1, "10")):
        writer.write(f"{offset} {count}\n".encode())
        header = await reader.readline()
        n = int(header.split()[1])
        body = await reader.readexactly(n)
        ok = offset < 0 or body == DATA[offset:offset + n]
        log("client:", offset, count, "->", header.strip(), "matches", ok)
    writer.close()
    await done.wait()
    log("client: then", await reader.read())
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    os.remove(path)
    os.rmdir(tmp)


asyncio.run(main())
