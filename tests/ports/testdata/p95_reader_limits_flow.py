# A line service read with a small limit (8) and the reader's own flow
# control: more than twice the limit buffered pauses the transport
# (is_reading() False) until reads bring it down to the limit. readuntil()
# with a tuple of separators counts the limit from the shortest separator
# that ends the match (b"\n" inside b"\r\n"), so the same record passes
# with b"\r\n" alone and overruns with (b"\r\n", b"\n"); the overrun
# leaves the data buffered. read(0), readexactly(0) and a negative
# readexactly(); a record cut by EOF; read() after EOF.
import asyncio

from probe import d, log, restart


async def main():
    done = asyncio.Event()

    async def handle(reader, writer):
        tr = writer.transport
        await asyncio.sleep(0.1)
        log("server: 40 bytes waiting, is_reading", tr.is_reading())
        log("server: read(0)", await reader.read(0), "readexactly(0)", await reader.readexactly(0))
        try:
            await reader.readexactly(-1)
        except ValueError as e:
            log("server: readexactly(-1)", d(e))
        log("server: readuntil", await reader.readuntil(b"\r\n"), "is_reading", tr.is_reading())
        try:
            await reader.readuntil((b"\r\n", b"\n"))
        except asyncio.LimitOverrunError as e:
            log("server: tuple overrun", e.args[0], "consumed", e.consumed)
        log("server: same record with one separator", await reader.readuntil(b"\r\n"))
        log("server: read(5)", await reader.read(5), "is_reading", tr.is_reading())
        log("server: readexactly(13)", await reader.readexactly(13), "is_reading", tr.is_reading())
        try:
            log("server: readuntil", await reader.readuntil(b"\r\n"))
        except asyncio.LimitOverrunError as e:
            log("server: overrun", e.args[0], "consumed", e.consumed, "is_reading", tr.is_reading())
            log("server: skip", await reader.readexactly(e.consumed + 2))
        try:
            log("server: readline", await reader.readline())
        except ValueError as e:
            log("server: readline", d(e))
        log("server: after it", await reader.readline())
        try:
            await reader.readuntil(b"\r\n")
        except asyncio.IncompleteReadError as e:
            log("server: cut by EOF, partial", e.partial, "expected", e.expected)
        log("server: read() at EOF", await reader.read(), "at_eof", reader.at_eof())
        writer.close()
        await writer.wait_closed()
        done.set()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=8)
    port = server.sockets[0].getsockname()[1]
    restart()
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"abc\r\nabcdefgh\r\n0123456789abcdefghijkl")
    await asyncio.sleep(0.2)
    w.write(b"mnopq\r\nlong-line-here\nok\ntail\r")
    w.write_eof()
    await done.wait()
    w.close()
    await w.wait_closed()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
