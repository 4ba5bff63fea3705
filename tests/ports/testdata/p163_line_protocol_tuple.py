# A line-oriented command server that accepts both "\r\n" and "\n" line
# ends with readuntil((b"\r\n", b"\n")) (3.13), with a small stream limit:
# a line that is too long is a LimitOverrunError whose consumed count says
# how much to drop (the server discards through the separator and goes
# on), a client that stops mid-line leaves an IncompleteReadError, and a
# client splitting "\r" from "\n" across two writes still gets one line.
import asyncio

from probe import d, log, restart

SEPS = (b"\r\n", b"\n")


async def handle(reader, writer):
    n = 0
    while True:
        try:
            raw = await reader.readuntil(SEPS)
        except asyncio.LimitOverrunError as e:
            log("server: too long, consumed", e.consumed, d(e))
            dropped = await reader.read(e.consumed)
            while True:
                try:
                    tail = await reader.readuntil(SEPS)
                    break
                except asyncio.LimitOverrunError as e2:
                    dropped += await reader.read(e2.consumed)
            log("server: dropped", len(dropped) + len(tail), "bytes")
            writer.write(b"ERR line too long\r\n")
            continue
        except asyncio.IncompleteReadError as e:
            log("server: EOF mid-line, partial", e.partial)
            break
        n += 1
        ending = "crlf" if raw.endswith(b"\r\n") else "lf"
        cmd = raw.rstrip(b"\r\n").decode()
        log("server: line", n, repr(cmd), ending)
        if cmd == "quit":
            writer.write(b"BYE\n")
            break
        writer.write(f"OK {cmd.upper()}\r\n".encode())
        await writer.drain()
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    log("server: connection done after", n, "lines")


async def main():
    restart()
    server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=16)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sends = [b"hello\r\n", b"unix\n", b"mixed\nboth\r\n", b"split\r", b"\nx",
             b"a" * 40 + b"\n", b"after\n", b"quit\r\n"]
    for chunk in sends:
        writer.write(chunk)
        await writer.drain()
        await asyncio.sleep(0.02)
    while line := await reader.readuntil(SEPS) if not reader.at_eof() else b"":
        log("client: reply", line)
        if line == b"BYE\n":
            break
    writer.close()
    await writer.wait_closed()

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"no end here")
    await asyncio.sleep(0.05)
    writer.write_eof()
    log("client 2: at_eof", await reader.read(), reader.at_eof())
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
