# A health checker probing several backends over TCP at once and handling
# the answers as they come with `async for t in as_completed(tasks,
# timeout=)` (3.13: the iterator yields the original tasks, so their names
# say which backend answered); a refused connection and a backend that
# answers "DOWN" are recorded, and the overall timeout stops the loop with
# the slow backend's task still pending, which is then cancelled while
# it reads.
import asyncio

from probe import d, log, restart

DELAYS = {"api": 0.05, "db": 0.12, "cache": 0.02, "search": 0.6}


async def backend(reader, writer, name):
    await reader.readline()
    await asyncio.sleep(DELAYS[name])
    writer.write(b"DOWN\n" if name == "db" else b"UP\n")
    await writer.drain()
    writer.close()
    await writer.wait_closed()


async def probe(name, port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(b"HEALTH\n")
        await writer.drain()
        status = (await reader.readline()).decode().strip()
        if status != "UP":
            raise RuntimeError(f"{name} says {status}")
        return status
    except asyncio.CancelledError:
        log(name, "probe cancelled while reading")
        raise
    finally:
        writer.close()


async def main():
    restart()
    servers, ports = [], {}
    for name in DELAYS:
        s = await asyncio.start_server(lambda r, w, n=name: backend(r, w, n), "127.0.0.1", 0)
        servers.append(s)
        ports[name] = s.sockets[0].getsockname()[1]
    dead = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    ports["legacy"] = dead.sockets[0].getsockname()[1]
    dead.close()
    await dead.wait_closed()

    tasks = [asyncio.create_task(probe(n, p), name=n) for n, p in ports.items()]
    report = {}
    try:
        async for t in asyncio.as_completed(tasks, timeout=0.3):
            assert t in tasks
            try:
                report[t.get_name()] = t.result()
            except (OSError, RuntimeError) as e:
                report[t.get_name()] = d(e) if isinstance(e, RuntimeError) else type(e).__name__
            log("answered:", t.get_name(), report[t.get_name()])
    except TimeoutError:
        late = [t.get_name() for t in tasks if not t.done()]
        log("timed out waiting for", late)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    log("report", sorted(report.items()))
    for s in servers:
        s.close()
        s.close_clients()
        await s.wait_closed()
    log("done")


asyncio.run(main())
