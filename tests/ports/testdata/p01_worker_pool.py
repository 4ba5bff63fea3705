# A worker pool over a bounded Queue: a producer blocks on put while the
# queue is full, joins, then shuts the queue down; idle workers blocked in
# get() wake with QueueShutDown. Then, on a fresh queue: a woken getter
# cancelled before it runs hands its item to the next getter, and a
# get_nowait() that takes the item meant for a woken getter sends that
# getter back to waiting.
import asyncio

from probe import log, restart


async def worker(name, q, results):
    while True:
        try:
            item = await q.get()
        except asyncio.QueueShutDown:
            log(name, "shutdown")
            return
        log(name, "got", item, "qsize", q.qsize())
        await asyncio.sleep(0.1 * item)
        results.append(f"{name}:{item}")
        log(name, "done", item)
        q.task_done()


async def main():
    restart()
    q = asyncio.Queue(maxsize=2)
    results = []
    workers = [asyncio.create_task(worker(f"w{i}", q, results)) for i in range(2)]
    for item in [3, 1, 4, 1, 5]:
        log("put", item, "full", q.full())
        await q.put(item)
    log("all put, qsize", q.qsize())
    await q.join()
    log("joined, qsize", q.qsize())
    q.shutdown()
    try:
        q.put_nowait(9)
    except asyncio.QueueShutDown:
        log("put after shutdown refused")
    for w in workers:
        await w
    log("results", " ".join(results))

    q = asyncio.Queue()

    async def getter(name):
        try:
            v = await q.get()
            log(name, "got", v)
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise

    g1 = asyncio.create_task(getter("g1"))
    g2 = asyncio.create_task(getter("g2"))
    await asyncio.sleep(0)
    q.put_nowait("item")
    g1.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    log("qsize", q.qsize(), "g2 done", g2.done())
    g3 = asyncio.create_task(getter("g3"))
    g4 = asyncio.create_task(getter("g4"))
    await asyncio.sleep(0)
    q.put_nowait("i2")
    log("stolen", q.get_nowait())
    q.put_nowait("i3")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    log("g3 done", g3.done(), "g4 done", g4.done())
    q.put_nowait("i4")
    await asyncio.gather(g3, g4)


asyncio.run(main())
