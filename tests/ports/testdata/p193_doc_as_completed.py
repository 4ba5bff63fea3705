# asyncio-task.rst "as_completed": the docs' two forms (async for over the
# original tasks, plain for over coroutines to await) racing an IPv4 and
# an IPv6 connection. open_connection is replaced by a coroutine that
# "connects" after a delay, so the program needs no server; then the
# timeout form, where the slow one is not done in time.
import asyncio
from asyncio import as_completed, create_task

from probe import d, log, restart


async def open_connection(host, port, delay):
    await asyncio.sleep(delay)
    return f"reader({host})", f"writer({host})"


async def main():
    restart()
    ipv4_connect = create_task(open_connection("127.0.0.1", 80, 0.2))
    ipv6_connect = create_task(open_connection("::1", 80, 0.1))
    tasks = [ipv4_connect, ipv6_connect]

    async for earliest_connect in as_completed(tasks):
        # earliest_connect is done. The result can be obtained by
        # awaiting it or calling earliest_connect.result()
        reader, writer = await earliest_connect

        if earliest_connect is ipv6_connect:
            log("IPv6 connection established.", reader, writer)
        else:
            log("IPv4 connection established.", reader, writer)

    restart()
    ipv4_connect = create_task(open_connection("127.0.0.1", 80, 0.1))
    ipv6_connect = create_task(open_connection("::1", 80, 0.2))
    tasks = [ipv4_connect, ipv6_connect]

    for next_connect in as_completed(tasks):
        # next_connect is not one of the original task objects. It must be
        # awaited to obtain the result value or raise the exception of the
        # awaitable that finishes next.
        reader, writer = await next_connect
        log("connected", reader, writer)

    restart()
    ipv4_connect = create_task(open_connection("127.0.0.1", 80, 0.1))
    ipv6_connect = create_task(open_connection("::1", 80, 0.3))
    tasks = [ipv4_connect, ipv6_connect]
    try:
        async for earliest_connect in as_completed(tasks, timeout=0.2):
            reader, writer = await earliest_connect
            log("connected", reader, writer)
    except TimeoutError as e:
        log("as_completed raised", d(e), "ipv6 done", ipv6_connect.done())
    ipv6_connect.cancel()


asyncio.run(main())
