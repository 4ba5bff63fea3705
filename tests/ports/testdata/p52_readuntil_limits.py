# A record protocol over readuntil() on a server started with limit=16:
# records end with b"\r\n"; one record longer than the limit raises
# LimitOverrunError (the data stays buffered, and e.consumed says how
# much to skip), whether or not its separator has arrived; readline()
# over the limit raises ValueError and drops the line; 3.13's tuple of
# separators; a record cut by EOF is an IncompleteReadError with the rest.
import asyncio

from probe import d, log, restart


async def main():
    done = asyncio.Event()

    async def handle(reader, writer):
        for step in ("rec", "rec", "rec", "skip", "rec", "line", "line", "multi", "multi", "multi",
                     "line", "line", "line", "rec", "rec"):
            try:
                if step == "rec":
                    rec = await reader.readuntil(b"\r\n")
                    log("server: record", rec)
                    writer.write(b"ack " + str(len(rec)).encode() + b"\n")
                elif step == "skip":
                    got = await reader.readexactly(skip)
                    log("server: skipped", len(got), "bytes, next", await reader.readuntil(b"\r\n"))
                elif step == "line":
                    log("server: line", await reader.readline())
                elif step == "multi":
                    log("server: multi", await reader.readuntil((b"\n", b";", b"\r\n")))
            except asyncio.LimitOverrunError as e:
                log("server:", d(e), "consumed", e.consumed)
                skip = e.consumed
                writer.write(b"too long\n")
            except ValueError as e:
                log("server:", d(e))
            except asyncio.IncompleteReadError as e:
                log("server:", d(e), "partial", e.partial, "expected", e.expected)
        log("server: at_eof", reader.at_eof())
        writer.close()
        done.set()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=16)
    port = server.sockets[0].getsockname()[1]
    restart()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for chunk in (b"short\r\n", b"exactly-16-bytes\r\n", b"x" * 20, b"yz\r\n", b"record-of-twenty-two\r\nok\r\n",
                  b"a line\n", b"semi;colon\r\n", b"a line much longer than sixteen\nnext\n", b"z" * 40, b"tail"):
        log("client sends", len(chunk), "bytes")
        writer.write(chunk)
        await asyncio.sleep(0.1)
    writer.write_eof()
    await done.wait()
    log("client reads", await reader.read())
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()


asyncio.run(main())
