# A job server: clients submit "JOB id duration" lines over TCP, the
# handlers put them on a shared asyncio.Queue that two workers drain,
# answering "DONE id" on the submitter's connection. Shutdown uses
# Queue.shutdown() (3.13): submissions after it are rejected
# (QueueShutDown), the jobs already queued still run, then the workers
# stop; the server stops accepting, gives connections a grace period, and
# abort_clients() (3.13) drops the one client still connected (it had
# sent nothing unread, so it reads EOF rather than a reset).
import asyncio

from probe import d, log, restart


async def handle(reader, writer, jobs):
    name = (await reader.readline()).decode().strip()
    try:
        async for line in reader:
            _, jid, dur = line.decode().split()
            try:
                jobs.put_nowait((name, jid, float(dur), writer))
                writer.write(f"QUEUED {jid}\n".encode())
            except asyncio.QueueShutDown:
                log("server: rejects", jid, "from", name)
                writer.write(f"REJECTED {jid}\n".encode())
            await writer.drain()
        log("server:", name, "hung up")
    except ConnectionError as e:
        log("server:", name, "connection error", d(e))
    finally:
        writer.close()


async def worker(wid, jobs):
    done = 0
    while True:
        try:
            name, jid, dur, writer = await jobs.get()
        except asyncio.QueueShutDown:
            log(f"worker {wid}: queue shut down after {done} jobs")
            return done
        await asyncio.sleep(dur)
        done += 1
        if writer.is_closing():
            log(f"worker {wid}: {name} gone, result of {jid} dropped")
        else:
            writer.write(f"DONE {jid}\n".encode())
        jobs.task_done()


async def client(port, name, plan, expect=None):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{name}\n".encode())
    got = []
    try:
        for at, jid, dur in plan:
            await asyncio.sleep(at)
            writer.write(f"JOB {jid} {dur}\n".encode())
        while len(got) < (expect or 2 * len(plan)):
            line = await reader.readline()
            if not line:
                log(name, "EOF after", got)
                break
            got.append(line.decode().strip())
            if got[-1].startswith("REJECTED"):
                got.append("-")
        else:
            log(name, "all answered:", got)
    except ConnectionError as e:
        log(name, "read failed:", d(e), "after", got)
    finally:
        writer.close()


async def main():
    restart()
    jobs = asyncio.Queue()
    server = await asyncio.start_server(lambda r, w: handle(r, w, jobs), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    workers = [asyncio.create_task(worker(i, jobs)) for i in (1, 2)]
    clients = [
        asyncio.create_task(client(port, "alice", [(0.01, "a1", 0.1), (0.02, "a2", 0.12)])),
        asyncio.create_task(client(port, "bob", [(0.02, "b1", 0.06), (0.2, "b2", 0.05)])),
        asyncio.create_task(client(port, "carol", [(0.04, "c1", 0.3), (0.2, "c2", 0.1)])),
        asyncio.create_task(client(port, "dave", [], expect=1)),
    ]
    await asyncio.sleep(0.17)
    log("shutdown: queue has", jobs.qsize(), "jobs")
    jobs.shutdown()
    done = await asyncio.gather(*workers)
    log("workers done", done)
    server.close()
    try:
        await asyncio.wait_for(server.wait_closed(), 0.1)
    except TimeoutError:
        log("grace over; aborting clients")
        server.abort_clients()
        await server.wait_closed()
    await asyncio.gather(*clients)
    log("closed")


asyncio.run(main())
