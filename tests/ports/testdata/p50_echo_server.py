# An echo server with several clients (start_server, open_connection,
# readline, write/drain, close/wait_closed), each client staying a
# different time; server.close() stops accepting at once (a new client is
# refused) while wait_closed() (3.12+) waits until the last connection
# has gone, and the handlers see their clients' EOF.
import asyncio

from probe import d, log, restart


async def main():
    handled = []

    async def handle(reader, writer):
        peer = len(handled)
        handled.append(peer)
        log("server: client", peer, "connected")
        while True:
            line = await reader.readline()
            if not line:
                log("server: client", peer, "EOF, at_eof", reader.at_eof())
                break
            writer.write(b"echo " + line.upper())
            await writer.drain()
        writer.close()
        await writer.wait_closed()
        log("server: client", peer, "closed")

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    log("serving", server.is_serving())

    async def client(name, words, stay):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for w in words:
            writer.write(w.encode() + b"\n")
            await writer.drain()
            reply = await reader.readline()
            log(name, "got", reply)
        await asyncio.sleep(stay)
        log(name, "closes, is_closing", writer.is_closing())
        writer.close()
        log(name, "is_closing", writer.is_closing())
        await writer.wait_closed()
        log(name, "closed")
        return name

    tasks = []
    for i, (words, stay) in enumerate(((["a", "bc"], 0.3), (["hello"], 0.7), (["x", "y", "z"], 0.7))):
        tasks.append(asyncio.create_task(client(f"c{i}", words, stay)))
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.2)
    log("main closes the server")
    server.close()
    log("serving", server.is_serving())
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        log("late client:", d(e))
    await server.wait_closed()
    log("wait_closed returned")
    log("clients", await asyncio.gather(*tasks))
    await server.wait_closed()
    log("again: returns at once")


asyncio.run(main())
