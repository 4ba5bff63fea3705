# A request/response client with a timeout around each read against a
# server that answers some requests late. The first client gives up
# (asyncio.timeout) and closes: the server answers into a closed
# connection, sees EOF, and its next write fails. The second client's
# wait_for() times out too but it keeps the connection: the late answer
# is still there for its next readline.
import asyncio

from probe import d, log, rel, restart


async def main():
    conns = 0

    async def handle(reader, writer):
        nonlocal conns
        conns += 1
        me = f"s{conns}"
        while line := await reader.readline():
            cmd, *args = line.decode().split()
            if cmd == "SLOW":
                await asyncio.sleep(float(args[0]))
                log(me, "answers", args[1])
            writer.write(args[-1].encode() + b"\n")
            await writer.drain()
        log(me, "sees EOF, transport closing", writer.is_closing())
        if me == "s1":
            await asyncio.sleep(0.1)
            writer.write(b"late\n")
            log(me, "wrote again, closing", writer.is_closing())
            try:
                await writer.drain()
            except ConnectionError as e:
                log(me, "drain", d(e))
        writer.close()
        try:
            await writer.wait_closed()
            log(me, "closed")
        except ConnectionError as e:
            log(me, "wait_closed", d(e))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()

    async def request(reader, writer, text):
        writer.write(text.encode() + b"\n")
        await writer.drain()
        return await reader.readline()

    r1, w1 = await asyncio.open_connection("127.0.0.1", port)
    async with asyncio.timeout(0.3):
        log("c1 got", await request(r1, w1, "ECHO a"))
    try:
        async with asyncio.timeout(0.3) as cm:
            log("c1 got", await request(r1, w1, "SLOW 0.5 b"))
    except TimeoutError as e:
        log("c1", d(e), "expired", cm.expired(), "when", rel(cm.when()))
    w1.close()
    await w1.wait_closed()
    log("c1 closed")
    await asyncio.sleep(0.4)

    r2, w2 = await asyncio.open_connection("127.0.0.1", port)
    try:
        log("c2 got", await asyncio.wait_for(request(r2, w2, "SLOW 0.3 c"), 0.2))
    except TimeoutError as e:
        log("c2", d(e), "keeps the connection")
    log("c2 reads the late answer", await r2.readline())
    log("c2 got", await asyncio.wait_for(request(r2, w2, "ECHO d"), 0.2))
    w2.close()
    await w2.wait_closed()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
