# The client's side of a reset and of a peer that stops reading. A server
# that aborts with the client's data unread resets the connection: the
# client's pending readline fails with ConnectionResetError, and so do its
# later reads, exception(), drain() and wait_closed(). A drain() against a
# server that stopped reading times out (wait_for) and the data is still
# delivered once the server reads again: a later drain() returns then.
# Small socket buffers keep what the kernel takes below what is written;
# what is still buffered when drain() returns depends on how much each
# send takes (the simulated network's sockets take other amounts than
# TCP's), so the program prints only that it is at most the low mark.
import asyncio
import socket

from probe import d, log, restart

PAYLOAD = 384 * 1024


async def main():
    async def handle(reader, writer):
        cmd = await reader.readline()
        if cmd == b"reset\n":
            writer.transport.pause_reading()
            await asyncio.sleep(0.2)
            log("server: aborts with unread data")
            writer.transport.abort()
            return
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        writer.transport.pause_reading()
        await asyncio.sleep(0.4)
        restart()  # what follows takes real time on loopback
        log("server: reads again")
        writer.transport.resume_reading()
        got = await reader.readexactly(PAYLOAD)
        log("server: got", len(got), "bytes")
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()

    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"reset\n")
    await asyncio.sleep(0.1)
    w.write(b"data the server never reads\n")
    try:
        await r.readline()
    except ConnectionResetError as e:
        log("client readline:", d(e))
    log("client exception():", d(r.exception()), "at_eof", r.at_eof(), "closing", w.is_closing())
    for name, op in (("read", r.read), ("drain", w.drain), ("wait_closed", w.wait_closed)):
        try:
            await op()
            log("client", name, "returned")
        except ConnectionError as e:
            log("client", name + ":", d(e))

    await asyncio.sleep(0.1)
    restart()
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
    w.write(b"slow reader\n")
    await asyncio.sleep(0.1)
    w.write(b"z" * PAYLOAD)
    log("client buffered", w.transport.get_write_buffer_size() > 0, "limits", w.transport.get_write_buffer_limits())
    try:
        await asyncio.wait_for(w.drain(), 0.2)
    except TimeoutError:
        log("client drain timed out, still buffered", w.transport.get_write_buffer_size() > 0)
    await w.drain()
    log("client drain returned, buffered <= low", w.transport.get_write_buffer_size() <= 16384)
    log("client reads", await r.read())
    w.close()
    await w.wait_closed()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
