# A job board on an asyncio.Condition: workers wait for jobs under the
# condition's lock and log every wakeup. A waiter leaving wait() with an
# error (cancelled, or its timeout expiring) passes a notification on to
# another waiter on its way out -- a spurious wakeup if it had not been
# notified itself -- so the woken worker re-checks and waits again. A
# waiter notified and then cancelled before it runs passes its
# notification on, and the job is not lost.
import asyncio

from probe import d, log, restart


async def worker(name, cond, jobs):
    try:
        while True:
            async with cond:
                while not jobs:
                    await cond.wait()
                    log(name, "woke, jobs", jobs)
                job = jobs.pop(0)
            if job is None:
                log(name, "stops")
                return
            log(name, "works on", job)
            await asyncio.sleep(0.1)
    except asyncio.CancelledError as e:
        log(name, "cancelled", d(e), "holds lock", cond.locked())
        raise


async def impatient(name, cond, jobs, patience):
    try:
        async with asyncio.timeout(patience):
            async with cond:
                await cond.wait_for(lambda: jobs)
                log(name, "got", jobs.pop(0))
    except TimeoutError:
        log(name, "gave up waiting")


async def main():
    restart()
    cond = asyncio.Condition()
    jobs = []
    ws = [asyncio.create_task(worker(f"w{i}", cond, jobs)) for i in range(3)]
    await asyncio.sleep(0.1)
    ws[1].cancel("not needed")
    await asyncio.sleep(0.1)

    async with cond:
        jobs.append("j1")
        cond.notify(1)
        log("posted j1")
    await asyncio.sleep(0.01)

    imp = asyncio.create_task(impatient("imp", cond, jobs, 0.2))
    await asyncio.sleep(0.35)

    async with cond:
        jobs.append("j2")
        cond.notify(1)
    ws[2].cancel()
    log("posted j2 and cancelled w2 (woken)")
    await asyncio.sleep(0.3)

    async with cond:
        jobs.extend([None, None])
        cond.notify_all()
    res = await asyncio.gather(*ws, imp, return_exceptions=True)
    log("outcomes", [d(r) for r in res], "jobs left", jobs)


asyncio.run(main())
