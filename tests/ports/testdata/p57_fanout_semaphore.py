# A fan-out client: six requests, at most two at a time (Semaphore), each
# on its own connection with a 0.4 s timeout, against a server that takes
# a per-request time. The slow ones time out, close their connection and
# free their slot for the next; the server finds out only when it has
# slept: the client's EOF is waiting in its reader.
import asyncio

from probe import d, log, restart

DELAYS = (0.1, 0.7, 0.2, 0.2, 0.5, 0.1)


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


async def main():
    async def handle(reader, writer):
        _, i, delay = (await reader.readline()).decode().split()
        await asyncio.sleep(float(delay))
        if reader.at_eof():
            log(f"server: r{i} client already gone")
        writer.write(f"resp {i}\n".encode())
        await writer.drain()
        await reader.read()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    sem = asyncio.Semaphore(2)

    async def fetch(i, delay):
        async with sem:
            log(f"r{i} start, semaphore", state(sem))
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                async with asyncio.timeout(0.4):
                    writer.write(f"GET {i} {delay}\n".encode())
                    await writer.drain()
                    resp = await reader.readline()
                log(f"r{i} got", resp)
                return resp.decode().strip()
            except TimeoutError:
                log(f"r{i} timed out")
                raise
            finally:
                writer.close()
                await writer.wait_closed()

    results = await asyncio.gather(*(fetch(i, delay) for i, delay in enumerate(DELAYS)), return_exceptions=True)
    log("results", [d(r) if isinstance(r, BaseException) else r for r in results])
    log("semaphore", state(sem))
    server.close()
    await server.wait_closed()
    log("server closed")


asyncio.run(main())
