# A chat server with an admin who kicks users, as IRC-style servers write
# it: the kick pops the victim's writer, writes a farewell and closes it
# from the admin's handler while the victim's own handler is blocked in
# readline() -- which then returns b"" (the close feeds EOF to the
# victim's reader), so that handler cleans up on its own. A write to the
# kicked writer after close() is dropped silently, and drain() on it
# raises ConnectionResetError once the connection is lost. The victim's
# client reads the farewell, then EOF. At the end close() and
# close_clients() shut the server: the remaining handlers see EOF too.
import asyncio

from probe import d, log, restart

clients = {}
left = []


async def handle(reader, writer):
    name = (await reader.readline()).decode().strip()
    clients[name] = writer
    log("server:", name, "joined")
    while line := await reader.readline():
        msg = line.decode().strip()
        if msg.startswith("/kick "):
            victim = msg.split()[1]
            w = clients.pop(victim)
            w.write(b"kicked by " + name.encode() + b"\n")
            w.close()
            log("server:", victim, "kicked, is_closing", w.is_closing())
            w.write(b"late line\n")
            try:
                await w.drain()
                log("server: drain after kick ok")
            except ConnectionResetError as e:
                log("server: drain after kick:", d(e))
            await w.wait_closed()
            log("server: kicked writer closed")
        elif msg == "/who":
            writer.write(("who " + " ".join(sorted(clients)) + "\n").encode())
        else:
            for other, w in sorted(clients.items()):
                if other != name:
                    w.write(f"{name}: {msg}\n".encode())
    if clients.get(name) is writer:
        del clients[name]
        # close_clients() closes the transports in the order of a set: noted, printed sorted
        left.append(name)
    else:
        log("server:", name, "handler sees EOF after kick")
    writer.close()
    await writer.wait_closed()


async def client(port, name, script):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(name.encode() + b"\n")
    got = []

    async def read_all():
        while line := await reader.readline():
            got.append(line.decode().strip())
        if name == "bob":
            log(name, "EOF, got", got)

    rd = asyncio.create_task(read_all())
    for delay, line in script:
        await asyncio.sleep(delay)
        writer.write(line.encode() + b"\n")
    await rd
    writer.close()
    await writer.wait_closed()
    return name, got


async def main():
    restart()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    tasks = [
        asyncio.create_task(client(port, "admin", [(0.1, "hello all"), (0.1, "/kick bob"), (0.1, "/who")])),
        asyncio.create_task(client(port, "bob", [(0.05, "hi admin")])),
        asyncio.create_task(client(port, "carol", [(0.25, "bye bob")])),
    ]
    await asyncio.sleep(0.5)
    log("main closes the server, clients", sorted(clients))
    server.close()
    server.close_clients()
    for name, got in await asyncio.gather(*tasks):
        log(name, "done, got", got)
    log("handlers left", sorted(left))
    await server.wait_closed()
    log("server closed, clients", clients)


asyncio.run(main())
