# A job scheduler: a PriorityQueue feeds two workers and join() waits for
# them; an urgent job put later jumps the line and equal priorities come
# out by the job name (tuple order). A LifoQueue of undo steps replays
# newest first. Then a bounded Queue is shut down with immediate=False:
# the blocked producer is refused, the consumer drains what was queued
# before it sees QueueShutDown, join() returns, and an extra task_done()
# raises ValueError.
import asyncio

from probe import d, log, restart

COST = {"alert": 0.12, "page-oncall": 0.07, "backup": 0.2, "report": 0.05,
        "cleanup": 0.09, "hotfix": 0.03}


async def worker(name, q, done):
    while True:
        try:
            prio, job = await q.get()
        except asyncio.QueueShutDown:
            log(name, "sees shutdown, qsize", q.qsize())
            return
        log(name, "runs", job, "prio", prio)
        await asyncio.sleep(COST[job])
        done.append(job)
        q.task_done()


async def main():
    restart()
    q = asyncio.PriorityQueue()
    done = []
    for prio, job in [(3, "report"), (1, "page-oncall"), (2, "backup"),
                      (1, "alert"), (5, "cleanup")]:
        q.put_nowait((prio, job))
    log("queued", q.qsize())
    workers = [asyncio.create_task(worker(f"w{i}", q, done)) for i in range(2)]
    await asyncio.sleep(0.13)
    q.put_nowait((0, "hotfix"))
    log("hotfix queued, qsize", q.qsize())
    await q.join()
    log("joined", done)
    q.shutdown()
    for w in workers:
        await w

    undo = asyncio.LifoQueue(maxsize=3)
    for step in ["create", "resize", "attach"]:
        await undo.put(step)
    log("undo full", undo.full())
    try:
        undo.put_nowait("extra")
    except asyncio.QueueFull:
        log("undo stack full")
    while not undo.empty():
        log("undo", undo.get_nowait())
    try:
        undo.get_nowait()
    except asyncio.QueueEmpty:
        log("undo stack empty")

    restart()
    q2 = asyncio.Queue(maxsize=2)

    async def producer():
        i = 0
        try:
            for i in range(5):
                await q2.put(i)
                log("produced", i)
        except asyncio.QueueShutDown:
            log("producer refused at", i)

    async def consumer():
        while True:
            try:
                item = await q2.get()
            except asyncio.QueueShutDown:
                log("consumer sees shutdown")
                return
            await asyncio.sleep(0.1)
            log("consumed", item)
            q2.task_done()

    p = asyncio.create_task(producer())
    c = asyncio.create_task(consumer())
    await asyncio.sleep(0.03)
    log("shutdown, qsize", q2.qsize(), "full", q2.full())
    q2.shutdown()
    await asyncio.gather(p, c)
    await q2.join()
    log("joined after drain")
    try:
        q2.task_done()
    except ValueError as e:
        log("extra task_done:", d(e))


asyncio.run(main())
