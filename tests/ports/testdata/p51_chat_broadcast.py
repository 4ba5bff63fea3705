# A line-based chat server broadcasting to every other client; clients
# leave in three ways: one sends half a line and closes (the server's
# readline gets the partial line, then EOF), one stops reading and aborts
# with the server's broadcast unread in its socket (the server's read
# fails with ConnectionResetError), one closes normally. A second,
# length-prefixed service gets a frame cut short by write_eof()
# (readexactly raises IncompleteReadError and the client still reads the
# answer).
import asyncio

from probe import d, log, restart


async def main():
    members = {}

    async def broadcast(sender, text):
        for name, w in list(members.items()):
            if name != sender:
                w.write(text.encode() + b"\n")
                await w.drain()

    async def chat(reader, writer):
        name = (await reader.readline()).decode().strip()
        members[name] = writer
        log("server:", name, "joined, members", sorted(members))
        await broadcast(name, f"* {name} joined")
        try:
            while True:
                line = await reader.readline()
                if not line:
                    log("server:", name, "EOF, at_eof", reader.at_eof())
                    break
                if not line.endswith(b"\n"):
                    log("server:", name, "partial line", line)
                    continue
                await broadcast(name, f"{name}: {line.decode().strip()}")
        except ConnectionError as e:
            log("server:", name, "read failed", d(e))
        del members[name]
        await broadcast(name, f"* {name} left")
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError as e:
            log("server:", name, "wait_closed", d(e))

    server = await asyncio.start_server(chat, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()

    async def join(name):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(name.encode() + b"\n")
        await writer.drain()
        return reader, writer

    async def listen(name, reader):
        while line := await reader.readline():
            log(name, "hears", line)
        log(name, "hears EOF")

    ar, aw = await join("alice")
    alice_ears = asyncio.create_task(listen("alice", ar))
    await asyncio.sleep(0.1)
    br, bw = await join("bob")
    await asyncio.sleep(0.1)
    cr, cw = await join("carol")
    await asyncio.sleep(0.1)
    bw.transport.pause_reading()
    aw.write(b"hi all\n")
    await asyncio.sleep(0.1)
    log("carol sends half a line and closes")
    cw.write(b"hel")
    cw.close()
    await cw.wait_closed()
    log("carol at_eof", cr.at_eof(), "still reads", await cr.read(), "at_eof", cr.at_eof())
    await asyncio.sleep(0.1)
    log("bob aborts with unread data")
    bw.transport.abort()
    await asyncio.sleep(0.1)

    async def framed(reader, writer):
        try:
            while True:
                n = int.from_bytes(await reader.readexactly(4), "big")
                body = await reader.readexactly(n)
                log("framed: got", body)
                writer.write(b"ok " + str(n).encode() + b"\n")
        except asyncio.IncompleteReadError as e:
            log("framed:", d(e), "partial", e.partial, "expected", e.expected)
            writer.write(b"short frame\n" if e.partial else b"bye\n")
        writer.close()

    fserver = await asyncio.start_server(framed, "127.0.0.1", 0)
    fport = fserver.sockets[0].getsockname()[1]
    fr, fw = await asyncio.open_connection("127.0.0.1", fport)
    fw.write((5).to_bytes(4, "big") + b"hello")
    log("framed client reads", await fr.readline())
    fw.write((10).to_bytes(4, "big") + b"abcd")
    fw.write_eof()
    log("framed client wrote eof, can_write_eof", fw.can_write_eof())
    log("framed client reads", await fr.read())
    log("framed client at_eof", fr.at_eof())
    fw.close()
    await fw.wait_closed()
    fserver.close()
    await fserver.wait_closed()

    await asyncio.sleep(0.1)
    log("alice leaves")
    aw.close()
    await aw.wait_closed()
    await alice_ears
    server.close()
    await server.wait_closed()
    log("servers closed, members", sorted(members))


asyncio.run(main())
