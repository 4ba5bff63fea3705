# A log shipper's bounded buffer being shut down at awkward moments: a
# producer blocked in put() on a full buffer when it is shut down
# gracefully gets QueueShutDown and its record is dropped, while the
# shipper still drains what was buffered; a putter woken because a slot
# freed up, with the shutdown coming before it runs, is refused although
# there is room; a getter woken by a put, with a graceful shutdown before
# it runs, still gets the record; with an immediate shutdown instead the
# record is discarded and the getter gets QueueShutDown.
import asyncio

from probe import log, restart


async def put(q, name, rec):
    try:
        await q.put(rec)
        log(name, "put", rec)
    except asyncio.QueueShutDown:
        log(name, "refused", rec, "qsize", q.qsize())


async def get(q, name):
    try:
        log(name, "got", await q.get())
    except asyncio.QueueShutDown:
        log(name, "shut down, qsize", q.qsize())


async def main():
    restart()
    q = asyncio.Queue(maxsize=2)
    q.put_nowait("r1")
    q.put_nowait("r2")
    p3 = asyncio.create_task(put(q, "p3", "r3"))
    await asyncio.sleep(0.1)
    q.shutdown()
    log("shut down with qsize", q.qsize(), "full", q.full())
    await p3
    shipper = [await q.get(), await q.get()]
    log("shipper drained", shipper)
    await get(q, "late getter")

    restart()
    q = asyncio.Queue(maxsize=1)
    q.put_nowait("a")
    p = asyncio.create_task(put(q, "pb", "b"))
    await asyncio.sleep(0.1)
    log("took", q.get_nowait(), "so pb is woken; full", q.full())
    q.shutdown()
    await p
    log("qsize", q.qsize())

    restart()
    for immediate in (False, True):
        q = asyncio.Queue()
        g = asyncio.create_task(get(q, f"g(immediate={immediate})"))
        await asyncio.sleep(0.1)
        q.put_nowait("x")
        q.shutdown(immediate=immediate)
        log("shutdown immediate", immediate, "qsize", q.qsize())
        await g
        await asyncio.sleep(0.1)


asyncio.run(main())
