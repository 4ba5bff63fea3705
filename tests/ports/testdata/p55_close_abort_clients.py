# Shutting a server down with clients connected (3.13): close() stops
# listening but wait_closed() waits for the connections; close_clients()
# closes them, after flushing what the server still had to send (a slow
# client gets all of it); abort_clients() drops the unsent data and the
# handler's pending drain() returns. Small socket buffers keep what the
# kernel takes well below the payload.
import asyncio
import socket

from probe import d, log, restart

PAYLOAD = 384 * 1024


async def main():
    async def handle(reader, writer):
        name = (await reader.readline()).decode().strip()
        if name.startswith("big"):
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
            writer.write(b"x" * PAYLOAD)
            log("server", name, "wrote, buffered", writer.transport.get_write_buffer_size() > 0)
            try:
                await writer.drain()
                log("server", name, "drain returned, closing", writer.is_closing())
            except ConnectionError as e:
                log("server", name, "drain", d(e))
        line = await reader.readline()
        log("server", name, "readline", line, "at_eof", reader.at_eof())

    async def client(port, name, pause=False):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        if pause:
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
            writer.transport.pause_reading()
        writer.write(name.encode() + b"\n")
        await writer.drain()
        return reader, writer

    async def read_all(name, reader, writer, resume_after=0):
        if resume_after:
            await asyncio.sleep(resume_after)
            log(name, "resumes reading")
            writer.transport.resume_reading()
        data = await reader.read()
        log(name, "read", "all" if len(data) == PAYLOAD else "part" if data else "nothing",
            "then EOF, at_eof", reader.at_eof())
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    a = await client(port, "a")
    await asyncio.sleep(0.1)
    server.close()
    log("closed: serving", server.is_serving(), "sockets", len(server.sockets))
    try:
        await asyncio.wait_for(server.wait_closed(), 0.1)
    except TimeoutError:
        log("wait_closed still waits for the client")
    reading = asyncio.create_task(read_all("a", *a))
    await asyncio.sleep(0)
    server.close_clients()
    log("close_clients")
    await server.wait_closed()
    log("wait_closed returned")
    await reading

    for how in ("close_clients", "abort_clients"):
        await asyncio.sleep(0.1)
        restart()
        log(how)
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        big = await client(port, "big-" + how, pause=True)
        await asyncio.sleep(0.1)
        reading = asyncio.create_task(read_all(how, *big, resume_after=0.2))
        await asyncio.sleep(0.1)
        server.close()
        getattr(server, how)()
        log("server", how, "done")
        await server.wait_closed()
        log("wait_closed returned")
        await reading


asyncio.run(main())
