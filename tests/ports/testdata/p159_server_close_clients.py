# Server.close() then wait_closed() in 3.12+: close stops accepting (a new
# connection is refused) but wait_closed waits for the connections still
# open; a shutdown with a grace period gives them 0.2 s, then
# close_clients() (3.13) closes the rest: its handler sees EOF and the
# client waiting for a reply reads the end of the stream. (One connection
# is left for close_clients: it closes a WeakSet's members in the set's
# hash order, which is no order a program can rely on.)
import asyncio

from probe import d, log, restart

active = {}


async def handle(reader, writer):
    name = (await reader.readline()).decode().strip()
    active[name] = writer
    log("server:", name, "connected")
    try:
        while line := await reader.readline():
            await asyncio.sleep(0.01)
            writer.write(b"echo " + line)
            await writer.drain()
        log("server:", name, "saw EOF")
    except ConnectionError as e:
        log("server:", name, "error", d(e))
    finally:
        del active[name]
        log("server:", name, "handler ends, closing:", writer.transport.is_closing())


async def client(port, name, lines, gap, wait_for_bye):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{name}\n".encode())
    try:
        for i in range(lines):
            writer.write(f"{name}{i}\n".encode())
            await writer.drain()
            await reader.readline()
            await asyncio.sleep(gap)
        if wait_for_bye:
            log(name, "waits for the server's goodbye")
            rest = await reader.readline()
            log(name, "read:", rest, "eof", reader.at_eof())
        log(name, "finished its", lines, "lines")
    except ConnectionError as e:
        log(name, "lost:", d(e))
    finally:
        writer.close()
        await writer.wait_closed()


async def main():
    restart()
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    clients = [asyncio.create_task(client(port, "quick", 2, 0.02, False)),
               asyncio.create_task(client(port, "steady", 3, 0.03, False)),
               asyncio.create_task(client(port, "idle", 1, 0, True))]
    await asyncio.sleep(0.045)
    server.close()
    log("closed; serving", server.is_serving(), "active", sorted(active))
    try:
        await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        log("new client refused:", type(e).__name__)
    waiter = asyncio.create_task(server.wait_closed())
    try:
        await asyncio.wait_for(asyncio.shield(waiter), 0.2)
        log("all connections ended by themselves")
    except TimeoutError:
        log("grace period over, still active", sorted(active))
        server.close_clients()
        await asyncio.sleep(0.03)
        log("after close_clients, active", sorted(active), "waiter done", waiter.done())
    await waiter
    log("wait_closed returned")
    await asyncio.gather(*clients)
    log("done")


asyncio.run(main())
