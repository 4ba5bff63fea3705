# A metrics forwarder keeps only the freshest samples: a bounded queue
# fed with put_nowait from a sampling timer, where QueueFull makes the
# producer drop the oldest sample (get_nowait plus task_done) to make
# room. A slow consumer drains with get(); a health check peeks with
# get_nowait on an empty queue (QueueEmpty); join() waits for the
# consumer; a buggy ack calls task_done() once too often (ValueError).
import asyncio

from probe import d, log, restart


async def main():
    restart()
    q = asyncio.Queue(maxsize=3)
    dropped = []
    handled = []

    def offer(sample):
        try:
            q.put_nowait(sample)
        except asyncio.QueueFull:
            old = q.get_nowait()
            q.task_done()
            dropped.append(old)
            q.put_nowait(sample)
            log("full: dropped", old, "for", sample, "qsize", q.qsize())

    async def producer():
        for i in range(8):
            offer(f"s{i}")
            await asyncio.sleep(0.06)
        log("producer done, qsize", q.qsize())

    async def consumer():
        while True:
            s = await q.get()
            log("consume", s, "qsize", q.qsize())
            await asyncio.sleep(0.13)
            handled.append(s)
            q.task_done()

    cons = asyncio.create_task(consumer())
    prod = asyncio.create_task(producer())
    await prod
    await q.join()
    log("joined; handled", handled, "dropped", dropped)
    try:
        q.get_nowait()
    except asyncio.QueueEmpty:
        log("health: queue empty", q.empty(), q.full())
    try:
        q.task_done()
    except ValueError as e:
        log("extra ack refused:", d(e))
    q.put_nowait("late")
    q.put_nowait("later")
    await asyncio.sleep(0.01)
    log("consumer took late, qsize", q.qsize())
    cons.cancel()
    try:
        await cons
    except asyncio.CancelledError:
        log("consumer cancelled, qsize", q.qsize())
    full = asyncio.Queue(1)
    full.put_nowait(1)
    try:
        await asyncio.wait_for(full.put(2), 0.1)
    except TimeoutError:
        log("put on full queue timed out, qsize", full.qsize())
    log("get_nowait", full.get_nowait(), "then empty", full.empty())


asyncio.run(main())
