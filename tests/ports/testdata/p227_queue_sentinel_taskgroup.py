# Producer/consumer in a TaskGroup with one sentinel (None) per worker,
# from "Producer / Consumer with asyncio.Queue" in
# https://www.liziu.com/python/async-patterns.html: the producer puts N
# items into a bounded queue and then NUM_WORKERS sentinels; each consumer
# breaks out of its loop at the sentinel. Adapted: log() instead of
# print, 8 items instead of 20 into a queue of 3 (so the producer blocks
# in put), and each worker takes its own time per item (0.2, 0.7, 0.5 s)
# so that no two sleeps end at the same instant.
import asyncio

from probe import log, restart

NUM_WORKERS = 3
WORK = [0.2, 0.7, 0.5]


async def producer(q, n):
    for i in range(n):
        await q.put(i)
        log("put", i, "qsize", q.qsize())
    for _ in range(NUM_WORKERS):
        await q.put(None)  # sentinel per worker
    log("producer done")


async def consumer(name, q, work):
    handled = 0
    while True:
        item = await q.get()
        if item is None:
            break
        log(f"{name} got {item}")
        await asyncio.sleep(work)
        handled += 1
    log(name, "saw the sentinel after", handled, "items")
    return handled


async def main():
    restart()
    q = asyncio.Queue(maxsize=3)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(producer(q, 8))
        workers = [tg.create_task(consumer(f"w{i}", q, WORK[i])) for i in range(NUM_WORKERS)]
    log("all done", [w.result() for w in workers], "empty", q.empty())


asyncio.run(main())
