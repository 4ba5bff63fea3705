# A TCP relay between a client and a backend: two pumps copy each way with
# a small write-buffer high-water mark (transport.set_write_buffer_limits)
# and drain after every chunk; when one side sends EOF the pump passes it
# on with write_eof (half-close) and the other direction keeps flowing
# until the backend answers and closes too.
import asyncio

from probe import d, log, restart


async def backend(reader, writer):
    log("backend: connected")
    total = 0
    while chunk := await reader.read(1000):
        total += len(chunk)
    log("backend: EOF after", total, "bytes")
    await asyncio.sleep(0.1)
    for i in range(3):
        writer.write(f"summary {i} of {total}\n".encode())
        await writer.drain()
        await asyncio.sleep(0.05)
    log("backend: closing")
    writer.close()
    await writer.wait_closed()


async def pump(name, reader, writer, stats):
    n = 0
    while chunk := await reader.read(4096):
        writer.write(chunk)
        await writer.drain()
        n += len(chunk)
    stats[name] = n
    if writer.can_write_eof():
        writer.write_eof()
        log(f"relay: {name} EOF passed on after", n, "bytes")


async def relay(reader, writer, backend_port, done):
    log("relay: client connected")
    up_r, up_w = await asyncio.open_connection("127.0.0.1", backend_port)
    for w in (writer, up_w):
        w.transport.set_write_buffer_limits(high=64, low=16)
    log("relay: limits", up_w.transport.get_write_buffer_limits())
    stats = {}
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(pump("up", reader, up_w, stats))
            tg.create_task(pump("down", up_r, writer, stats))
    finally:
        up_w.close()
        writer.close()
        await up_w.wait_closed()
        await writer.wait_closed()
        log("relay: done", sorted(stats.items()))
        done.set()


async def main():
    restart()
    back = await asyncio.start_server(backend, "127.0.0.1", 0)
    bport = back.sockets[0].getsockname()[1]
    done = asyncio.Event()
    front = await asyncio.start_server(lambda r, w: relay(r, w, bport, done), "127.0.0.1", 0)
    fport = front.sockets[0].getsockname()[1]

    reader, writer = await asyncio.open_connection("127.0.0.1", fport)
    for i in range(4):
        writer.write(b"x" * 250)
        await writer.drain()
        await asyncio.sleep(0.02)
    writer.write_eof()
    log("client: sent 1000 bytes and EOF")
    lines = []
    while line := await reader.readline():
        lines.append(line.decode().strip())
        log("client: got", repr(lines[-1]))
    log("client: EOF, at_eof", reader.at_eof(), "lines", len(lines))
    writer.close()
    await writer.wait_closed()
    await done.wait()
    for s in (front, back):
        s.close()
        await s.wait_closed()
    log("servers closed")


asyncio.run(main())
