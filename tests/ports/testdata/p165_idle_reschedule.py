# A session server with an idle timeout that each received line pushes
# back (timeout.reschedule(loop.time() + IDLE)), reading with `async for
# line in reader`; a session also has a hard cap on its total length,
# an outer timeout_at. A chatty client outlives several idle periods and
# ends by the cap, a slow one is dropped as idle, and one that says "bye"
# ends cleanly; each client reads until the server closes.
import asyncio

from probe import d, log, restart

IDLE = 0.15
CAP = 0.5


async def session(reader, writer):
    loop = asyncio.get_running_loop()
    name = (await reader.readline()).decode().strip()
    start = loop.time()
    n = 0
    why = "eof"
    try:
        async with asyncio.timeout_at(start + CAP) as cap:
            async with asyncio.timeout(IDLE) as idle:
                async for line in reader:
                    n += 1
                    if line.strip() == b"bye":
                        why = "bye"
                        break
                    idle.reschedule(loop.time() + IDLE)
                    writer.write(b"ack " + line)
        if idle.expired():
            why = "idle"
    except TimeoutError:
        why = "idle" if idle.expired() else "cap" if cap.expired() else "?"
    log("server:", name, "ends:", why, "after", n, "lines")
    writer.write(f"closing: {why}\n".encode())
    await writer.drain()
    writer.close()
    await writer.wait_closed()


async def client(port, name, gaps, bye):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{name}\n".encode())

    async def talk():
        for gap in gaps:
            await asyncio.sleep(gap)
            if writer.is_closing():
                return
            writer.write(b"tick\n")
        if bye:
            writer.write(b"bye\n")

    talker = asyncio.create_task(talk())
    acks = 0
    async for line in reader:
        if line.startswith(b"ack"):
            acks += 1
        else:
            log(name, "got", line, "after", acks, "acks")
    talker.cancel()
    writer.close()
    await writer.wait_closed()


async def main():
    restart()
    server = await asyncio.start_server(session, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await asyncio.gather(
            client(port, "chatty", [0.09] * 8, False),
            client(port, "slow", [0.08, 0.14, 0.25], False),
            client(port, "polite", [0.05, 0.05], True),
        )
    log("done")


asyncio.run(main())
