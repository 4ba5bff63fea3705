# A keepalive protocol over streams, as game and IoT servers write it: the
# client sends "PING n" every 0.1 s and the server answers "PONG n"; the
# server reads each line under wait_for(readline(), 0.26), so a read that
# times out is cancelled mid-wait (no byte is lost: a line arriving later
# is read whole by the next readline). A client that stops pinging for
# longer than the timeout gets "BYE idle" and the server closes; the
# client, which tracks the last PONG with a timeout it reschedules on each
# reply, reads the BYE and then EOF. A second client sends a ping in two
# pieces straddling one timeout: the first timeout is forgiven once
# (strikes), the line then arrives whole.
import asyncio

from probe import d, log, restart


async def serve(reader, writer):
    name = (await reader.readline()).decode().strip()
    strikes = 0
    while True:
        try:
            line = await asyncio.wait_for(reader.readline(), 0.26)
        except TimeoutError:
            strikes += 1
            log("server:", name, "timeout, strike", strikes,)
            if strikes < 2 and name == "split":
                continue
            writer.write(b"BYE idle\n")
            break
        if not line:
            log("server:", name, "EOF")
            break
        strikes = 0
        cmd, n = line.decode().split()
        writer.write(f"PONG {n}\n".encode())
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    log("server:", name, "closed")


async def pinger(port, pings, pause):
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"pinger\n")
    got = []

    async def send():
        for n in range(pings):
            writer.write(f"PING {n}\n".encode())
            await asyncio.sleep(0.1)
        await asyncio.sleep(pause)

    sender = asyncio.create_task(send())
    try:
        async with asyncio.timeout(0.5) as cm:
            while line := await reader.readline():
                got.append(line.decode().strip())
                cm.reschedule(loop.time() + 0.5)
        log("client: EOF after", got[-3:], "pongs", sum(g.startswith("PONG") for g in got))
    except TimeoutError:
        log("client: no pong in time")
    sender.cancel()
    log("client: sender cancelled", await asyncio.gather(sender, return_exceptions=True) != [None])
    writer.close()
    await writer.wait_closed()


async def splitter(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"split\nPING 1\n")
    log("split got", await reader.readline())
    writer.write(b"PI")
    await asyncio.sleep(0.3)
    writer.write(b"NG 2\n")
    log("split got", await reader.readline())
    await asyncio.sleep(0.6)
    log("split got", await reader.readline(), await reader.readline())
    writer.close()
    await writer.wait_closed()


async def main():
    restart()
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    await pinger(port, 3, 0.5)
    restart()
    await splitter(port)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
