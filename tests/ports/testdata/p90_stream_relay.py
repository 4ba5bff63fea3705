# A TCP relay (a proxy) between clients and a backend, streams on every
# side: each client connection gets its own backend connection and two
# pipes, up and down, each read(n) -> write -> drain(), in a TaskGroup.
# The backend echoes line by line and answers a summary only after the
# client's EOF, which the relay passes on with write_eof() (half-close
# through the proxy). A bulk client writes more than the buffers hold
# while another task reads the echo (backpressure all the way). When the
# backend is gone the relay tells its client and closes; a client that
# sends a frame cut short gets IncompleteReadError's partial from its
# reader; both sides of every relay are closed and waited for.
import asyncio

from probe import d, log, restart

quiet = None  # during the bulk transfer the relay's lines are kept, not timed


def note(*a):
    if quiet is None:
        log(*a)
    else:
        quiet.append(" ".join(str(x) for x in a))


async def backend(reader, writer):
    total = lines = 0
    while line := await reader.readline():
        total += len(line)
        lines += 1
        writer.write(b"B:" + line)
        await writer.drain()
    note("backend: EOF after", lines, "lines", total, "bytes, at_eof", reader.at_eof())
    writer.write(b"total %d\n" % total)
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    note("backend: closed")


async def pipe(name, reader, writer):
    n = 0
    while data := await reader.read(4096):
        n += len(data)
        writer.write(data)
        await writer.drain()
    note(f"relay {name}: EOF after", n, "bytes, can_write_eof", writer.can_write_eof())
    if writer.can_write_eof():
        writer.write_eof()
    return n


async def relay(creader, cwriter):
    try:
        breader, bwriter = await asyncio.open_connection("127.0.0.1", BPORT)
    except OSError as e:
        note("relay: backend refused", d(e))
        cwriter.write(b"ERR backend down\n")
        await cwriter.drain()
        cwriter.close()
        await cwriter.wait_closed()
        note("relay: told the client")
        return
    async with asyncio.TaskGroup() as tg:
        up = tg.create_task(pipe("up", creader, bwriter))
        down = tg.create_task(pipe("down", breader, cwriter))
    note("relay: both ways done", up.result(), down.result(), "closing", cwriter.is_closing(), bwriter.is_closing())
    for w in (bwriter, cwriter):
        w.close()
    await asyncio.gather(bwriter.wait_closed(), cwriter.wait_closed())
    note("relay: closed both")


async def main():
    global BPORT
    back = await asyncio.start_server(backend, "127.0.0.1", 0)
    BPORT = back.sockets[0].getsockname()[1]
    front = await asyncio.start_server(relay, "127.0.0.1", 0)
    port = front.sockets[0].getsockname()[1]
    restart()

    r, w = await asyncio.open_connection("127.0.0.1", port)
    for word in (b"one", b"two"):
        w.write(word + b"\n")
        log("client got", await r.readline())
    await asyncio.sleep(0.1)
    w.write(b"three\nfour")
    w.write_eof()
    log("client half-closed, is_closing", w.is_closing())
    await asyncio.sleep(0.1)
    log("client reads", await r.readline(), await r.readline())
    log("client reads rest", await r.read(), "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()
    await asyncio.sleep(0.1)

    restart()
    r, w = await asyncio.open_connection("127.0.0.1", port)
    line = b"z" * 999 + b"\n"
    count = 300

    async def reader_task():
        got = 0
        while data := await r.read(65536):
            got += len(data)
        return got

    global quiet
    quiet = []
    rt = asyncio.create_task(reader_task())
    for _ in range(count):
        w.write(line)
    note("bulk client wrote", count * len(line), "bytes")
    await w.drain()
    w.write_eof()
    got = await rt
    await asyncio.sleep(0.1)
    restart()  # the transfer takes real time on loopback
    log("bulk client read", got, "bytes, expected", count * (len(line) + 2) + len(b"total %d\n" % (count * len(line))))
    for x in quiet:
        log(" ", x)
    quiet = None
    w.close()
    await w.wait_closed()
    await asyncio.sleep(0.1)

    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"frame\n")
    log("framed client got", await r.readexactly(8))
    w.write_eof()
    await asyncio.sleep(0.1)
    try:
        await r.readexactly(20)
    except asyncio.IncompleteReadError as e:
        log("framed client: incomplete, partial", e.partial, "expected", e.expected, "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()
    await asyncio.sleep(0.1)

    back.close()
    await back.wait_closed()
    log("backend closed, serving", back.is_serving())
    r, w = await asyncio.open_connection("127.0.0.1", port)
    log("late client reads", await r.read(), "at_eof", r.at_eof())
    w.close()
    await w.wait_closed()
    front.close()
    await front.wait_closed()
    log("relay closed")


asyncio.run(main())
