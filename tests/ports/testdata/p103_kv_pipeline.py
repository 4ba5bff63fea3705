# A key-value server speaking a line protocol (SET k v, GET k, DEL k,
# INCR k, QUIT), the shape of a small Redis: a client pipelines a batch of
# requests in one write, then reads the replies, which come back in
# request order; an unknown command or an INCR of a non-number gets an
# error reply and the connection goes on; a request split across two
# writes is answered once its line is complete; a second client shares
# the store; QUIT is answered and the server closes that connection (the
# client reads the reply, then EOF); a client that just closes is seen as
# EOF by the server. The server counts connections and commands.
import asyncio

from probe import log, restart

store = {}
stats = {"conns": 0, "cmds": 0}


def execute(parts):
    cmd = parts[0].upper() if parts else ""
    if cmd == "SET" and len(parts) == 3:
        store[parts[1]] = parts[2]
        return "OK"
    if cmd == "GET" and len(parts) == 2:
        return store.get(parts[1], "(nil)")
    if cmd == "DEL" and len(parts) == 2:
        return str(int(store.pop(parts[1], None) is not None))
    if cmd == "INCR" and len(parts) == 2:
        try:
            n = int(store.get(parts[1], "0")) + 1
        except ValueError:
            return "ERR not an integer"
        store[parts[1]] = str(n)
        return str(n)
    return f"ERR unknown command {cmd!r}"


async def handle(reader, writer):
    stats["conns"] += 1
    peer = f"c{stats['conns']}"
    log("server:", peer, "connected")
    try:
        while True:
            line = await reader.readline()
            if not line:
                log("server:", peer, "EOF")
                break
            stats["cmds"] += 1
            parts = line.decode().split()
            if parts and parts[0].upper() == "QUIT":
                writer.write(b"BYE\n")
                await writer.drain()
                log("server:", peer, "quits")
                break
            writer.write(execute(parts).encode() + b"\n")
            await writer.drain()
    finally:
        writer.close()
        await writer.wait_closed()
        log("server:", peer, "closed")


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    r1, w1 = await asyncio.open_connection("127.0.0.1", port)
    batch = [b"SET a 1", b"SET b hello", b"INCR a", b"INCR b", b"GET a", b"FLY x", b"DEL b", b"GET b"]
    w1.write(b"\n".join(batch) + b"\n")
    await w1.drain()
    replies = [(await r1.readline()).decode().strip() for _ in batch]
    log("pipelined replies", replies)

    w1.write(b"GE")
    await asyncio.sleep(0.1)
    log("half a request sent")
    w1.write(b"T a\n")
    log("split request reply", await r1.readline())

    r2, w2 = await asyncio.open_connection("127.0.0.1", port)
    w2.write(b"INCR a\n")
    log("c2 INCR a", await r2.readline())
    w1.write(b"GET a\n")
    log("c1 GET a", await r1.readline())

    w2.write(b"QUIT\n")
    bye = await r2.readline()
    rest = await r2.read()
    log("c2 got", bye, "then", rest, "at_eof", r2.at_eof())
    w2.close()
    await w2.wait_closed()

    await asyncio.sleep(0.1)
    w1.close()
    await w1.wait_closed()
    await asyncio.sleep(0.1)
    log("stats", stats, "store", sorted(store.items()))
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
