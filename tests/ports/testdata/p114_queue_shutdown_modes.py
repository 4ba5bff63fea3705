# Stopping a producer/consumer pipeline with Queue.shutdown() (3.13), as
# ETL code does: the graceful way (shutdown() once the producer is done:
# consumers drain what is queued, then their get() raises QueueShutDown,
# and join() returns when every item was marked done) and the abort
# (shutdown(immediate=True): queued items are dropped and counted as done,
# so join() returns at once; getters and a producer blocked in put() on a
# full queue are woken with QueueShutDown). After shutdown put_nowait and
# put raise, get_nowait of an empty queue raises QueueShutDown rather than
# QueueEmpty, and task_done() more times than items raises ValueError.
# A LifoQueue and a PriorityQueue shut down the same way.
import asyncio

from probe import d, log, restart


async def consumer(name, q, out, delay):
    try:
        while True:
            item = await q.get()
            try:
                await asyncio.sleep(delay)
                out.append(f"{name}:{item}")
            finally:
                q.task_done()
    except asyncio.QueueShutDown:
        log(name, "sees shutdown, qsize", q.qsize())
        return name


async def producer(q, items, gap):
    sent = 0
    try:
        for item in items:
            await q.put(item)
            sent += 1
            await asyncio.sleep(gap)
    except asyncio.QueueShutDown:
        log("producer stopped by shutdown after", sent)
    return sent


async def graceful():
    restart()
    q = asyncio.Queue(maxsize=2)
    out = []
    cons = [asyncio.create_task(consumer(f"c{i}", q, out, 0.1)) for i in range(2)]
    sent = await producer(q, range(6), 0.01)
    log("produced", sent, "qsize", q.qsize(), "shutting down")
    q.shutdown()
    try:
        q.put_nowait(99)
    except asyncio.QueueShutDown:
        log("put_nowait after shutdown: QueueShutDown")
    await q.join()
    log("join returned, processed", len(out))
    log("consumers", await asyncio.gather(*cons))
    try:
        q.get_nowait()
    except asyncio.QueueShutDown:
        log("get_nowait on empty shut queue: QueueShutDown")
    log("out", out)


async def abort():
    restart()
    q = asyncio.Queue(maxsize=3)
    out = []
    prod = asyncio.create_task(producer(q, range(20), 0))
    cons = asyncio.create_task(consumer("slow", q, out, 0.2))
    idle = asyncio.Queue()
    idlers = [asyncio.create_task(consumer(f"idle{i}", idle, out, 0)) for i in range(2)]
    joiner = asyncio.create_task(q.join())
    await asyncio.sleep(0.3)
    log("before abort qsize", q.qsize(), "full", q.full(), "out", out)
    q.shutdown(immediate=True)
    idle.shutdown(immediate=True)
    log("after abort qsize", q.qsize(), "empty", q.empty())
    await asyncio.sleep(0)
    log("joiner done", joiner.done())
    sent = await prod
    log("producer sent", sent)
    log("slow consumer", await cons, "idlers", await asyncio.gather(*idlers))
    try:
        q.task_done()
    except ValueError as e:
        log("extra task_done:", d(e))
    await joiner
    log("out", out)


async def other_kinds():
    restart()
    for q in (asyncio.LifoQueue(), asyncio.PriorityQueue()):
        for x in (3, 1, 2):
            q.put_nowait(x)
        q.shutdown()
        got = []
        while True:
            try:
                got.append(q.get_nowait())
            except asyncio.QueueShutDown:
                break
        log(type(q).__name__, "drained", got)
        try:
            await q.put(4)
        except asyncio.QueueShutDown:
            log(type(q).__name__, "put after shutdown: QueueShutDown")
        q.shutdown(immediate=True)
        for _ in got:
            q.task_done()
        await q.join()
        log(type(q).__name__, "joined")


async def main():
    await graceful()
    await abort()
    await other_kinds()


asyncio.run(main())
