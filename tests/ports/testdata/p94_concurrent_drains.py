# A push server: each connection gets two producer tasks sharing one
# StreamWriter, each writing 64 KiB chunks and awaiting drain() (3.13
# lets several tasks wait in drain() at once). The first client reads
# slowly and then goes away cleanly; the server side aborts its own
# transport while both producers wait in drain(): a loss without an error
# releases them, and their next drain() fails. The second client aborts
# with the server's data unread in its socket: the reset wakes both
# waiting producers with ConnectionResetError, and so does every drain()
# after. Water marks are checked and set on the transport.
import asyncio
import socket

from probe import d, log, restart

CHUNK = b"p" * 65536


async def main():
    loop = asyncio.get_running_loop()
    waiting = {}

    async def producer(name, writer):
        sent = 0
        try:
            while True:
                writer.write(CHUNK)
                sent += 1
                waiting[name] = True
                await writer.drain()
                waiting[name] = False
        except ConnectionError as e:
            waiting[name] = False
            log(name, "drain failed", d(e))
            return "failed"
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise

    async def handle(reader, writer):
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
        tr = writer.transport
        try:
            tr.set_write_buffer_limits(high=1000, low=2000)
        except ValueError as e:
            log("server: bad limits", d(e))
        tr.set_write_buffer_limits(high=65536)
        log("server: limits", tr.get_write_buffer_limits())
        mode = (await reader.readline()).strip().decode()
        results = []
        async with asyncio.TaskGroup() as tg:
            a = tg.create_task(producer(mode + "-a", writer))
            b = tg.create_task(producer(mode + "-b", writer))
            await asyncio.sleep(0.3)
            log("server: both waiting in drain", waiting[mode + "-a"], waiting[mode + "-b"])
            if mode == "abort":
                tr.abort()
                log("server: aborted, closing", writer.is_closing())
        log("server:", mode, a.result(), b.result())
        try:
            await writer.drain()
            log("server: drain after returns")
        except ConnectionError as e:
            log("server: drain after:", d(e))
        try:
            await writer.wait_closed()
            log("server: wait_closed returns")
        except ConnectionError as e:
            log("server: wait_closed:", d(e))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()

    for mode in ("abort", "reset"):
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        w.transport.pause_reading()
        w.write(mode.encode() + b"\n")
        await asyncio.sleep(0.5)
        if mode == "abort":
            w.transport.resume_reading()
            data = await r.read()
            log("client read some", len(data) > 0, "then EOF", r.at_eof())
            w.close()
            await w.wait_closed()
        else:
            log("client aborts with unread data")
            w.transport.abort()
        await asyncio.sleep(0.2)
        restart()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
