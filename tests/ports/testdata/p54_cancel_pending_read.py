# A client cancels its pending reads: read(n), readexactly(n) with part
# of the bytes buffered, and read() until EOF with two blocks taken. The
# server sees nothing of it (its writes go on, the connection stays
# open); a second reader while one waits is a RuntimeError; what a
# cancelled read(n) or readexactly(n) was waiting for is still read by
# the next read. A cancelled read() until EOF drops the blocks it had
# taken (asyncio), so the next read() at EOF returns b''.
import asyncio

from probe import d, log, restart


async def main():
    server_done = asyncio.Event()
    connected = asyncio.Event()

    async def handle(reader, writer):
        log("server: connected")
        connected.set()
        for i, part in enumerate((b"part1\n", b"part2\n", b"tail1", b"tail2")):
            await asyncio.sleep(0.2)
            writer.write(part)
            await writer.drain()
            log("server: sent", part)
        await asyncio.sleep(0.2)
        writer.write_eof()
        log("server: wrote EOF")
        log("server: client says", await reader.read(), "at_eof", reader.at_eof())
        writer.close()
        await writer.wait_closed()
        server_done.set()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    await connected.wait()

    async def cancel_after(delay, name, aw):
        task = asyncio.ensure_future(aw)
        await asyncio.sleep(delay)
        log("cancel", name, "->", task.cancel())
        try:
            log(name, "returned", await task)
        except asyncio.CancelledError:
            log(name, "cancelled", task.cancelled())

    first = asyncio.ensure_future(reader.read(100))
    await asyncio.sleep(0)
    try:
        await reader.readline()
    except RuntimeError as e:
        log("second reader:", d(e))
    first.cancel()
    try:
        await first
    except asyncio.CancelledError:
        log("read(100) cancelled", first.cancelled())
    await asyncio.sleep(0.3)
    log("readline", await reader.readline())
    await cancel_after(0.2, "readexactly(10)", reader.readexactly(10))
    log("read(100)", await reader.read(100))
    await cancel_after(0.4, "read()", reader.read())
    log("read() again", await reader.read(), "at_eof", reader.at_eof())
    writer.write(b"bye")
    writer.close()
    await writer.wait_closed()
    await server_done.wait()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
