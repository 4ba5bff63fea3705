# A job scheduler on a PriorityQueue of (priority, seq, job): two
# workers, an urgent job put while they are busy jumps ahead of the
# queued ones, a flaky job is put back once with a lower priority, and
# join() returns only after every task_done(), the retry's included. Then
# an undo stack on a bounded LifoQueue: the producer blocks while it is
# full, the consumer takes the newest first, join() waits for the last
# task_done(), and one task_done() too many is a ValueError.
import asyncio
import itertools

from probe import d, log, restart

DURATION = {"build": 0.12, "test": 0.20, "lint": 0.04, "deploy": 0.17, "flaky": 0.08, "hotfix": 0.04, "docs": 0.06}


async def worker(name, q, seq, retried, done):
    while True:
        prio, _, job = await q.get()
        try:
            log(name, "runs", job, "prio", prio, "left", q.qsize())
            await asyncio.sleep(DURATION[job])
            if job == "flaky" and job not in retried:
                retried.add(job)
                q.put_nowait((prio + 10, next(seq), job))
                log(name, "requeued", job)
            else:
                done.append(job)
        finally:
            q.task_done()


async def main():
    restart()
    q = asyncio.PriorityQueue()
    seq = itertools.count()
    for prio, job in [(5, "docs"), (2, "build"), (3, "test"), (2, "flaky"), (4, "lint"), (3, "deploy")]:
        q.put_nowait((prio, next(seq), job))
    retried, done = set(), []
    workers = [asyncio.create_task(worker(f"w{i}", q, seq, retried, done)) for i in range(2)]
    await asyncio.sleep(0.1)
    q.put_nowait((0, next(seq), "hotfix"))
    log("hotfix queued, qsize", q.qsize())
    await q.join()
    log("joined, done", done)
    for w in workers:
        w.cancel()
    r = await asyncio.gather(*workers, return_exceptions=True)
    log("workers", [d(x) for x in r])

    restart()
    undo = asyncio.LifoQueue(2)

    async def record():
        for op in ["type a", "type b", "delete", "paste"]:
            await undo.put(op)
            log("recorded", op, "full", undo.full())
            await asyncio.sleep(0.01)

    async def rollback():
        while True:
            op = await undo.get()
            log("undo", op)
            await asyncio.sleep(0.1)
            undo.task_done()

    rec = asyncio.create_task(record())
    await asyncio.sleep(0.06)
    rb = asyncio.create_task(rollback())
    await rec
    log("recording finished, qsize", undo.qsize())
    await undo.join()
    log("undo joined")
    rb.cancel()
    try:
        undo.task_done()
    except ValueError as e:
        log("extra task_done:", d(e))


asyncio.run(main())
