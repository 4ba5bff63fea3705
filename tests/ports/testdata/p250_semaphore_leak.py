# "Mastering asyncio.Semaphore: Pitfalls, Deadlocks, and Alternative
# Primitives", https://runebook.dev/en/docs/python/library/asyncio-sync/asyncio.Semaphore
# The page's faulty_task: acquire() then an exception before release()
# loses the permit for good, and later tasks wait forever. Its fix:
# async with. Adapted: Semaphore(2), the failing condition is task ids 1 and 2
# (of 0..3), work 0.2 s, the hang shown with wait_for around the last
# task; then the async with version.
import asyncio

from probe import d, log, restart


async def faulty_task(i, semaphore):
    await semaphore.acquire()
    log("faulty", i, "acquired")
    await asyncio.sleep(0.2)
    if i in (1, 2):
        raise ValueError(f"task {i} failed")
    semaphore.release()
    log("faulty", i, "released")


async def safe_task(i, semaphore):
    async with semaphore:
        log("safe", i, "acquired")
        await asyncio.sleep(0.2)
        if i in (1, 2):
            raise ValueError(f"task {i} failed")
    log("safe", i, "released")


async def run(task, label):
    sem = asyncio.Semaphore(2)
    results = await asyncio.gather(*(task(i, sem) for i in range(4)), return_exceptions=True)
    log(label, "results", [d(r) for r in results], "locked", sem.locked())
    try:
        await asyncio.wait_for(sem.acquire(), timeout=0.3)
        log(label, "a new acquire got a permit")
        sem.release()
    except TimeoutError:
        log(label, "a new acquire waits forever")


async def main():
    restart()
    sem = asyncio.Semaphore(2)
    tasks = [asyncio.create_task(faulty_task(i, sem)) for i in range(3)]
    late = asyncio.create_task(faulty_task(3, sem))
    res = await asyncio.gather(*tasks, return_exceptions=True)
    log("first three", [d(r) for r in res])
    try:
        await asyncio.wait_for(late, timeout=0.3)
    except TimeoutError:
        log("task 3 never got a permit; locked", sem.locked())
    restart()
    await run(safe_task, "async with")


asyncio.run(main())
