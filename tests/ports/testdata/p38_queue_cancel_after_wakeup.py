# Queue.get cancelled right after a put woke it, and Queue.put cancelled
# right after a get freed its slot: the item is never lost and the wakeup
# passes to the next waiter (QUEUE-3, QUEUE-4, 3.13).
import asyncio

from probe import d, log, restart


async def getter(q, name, got):
    try:
        got.append((name, await q.get()))
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e), "qsize", q.qsize())
        raise


async def putter(q, name, item):
    try:
        await q.put(item)
        log("   ", name, "put", item)
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e), "qsize", q.qsize())
        raise


async def main():
    restart()
    for n in (1, 2):
        q = asyncio.Queue()
        got = []
        gs = [asyncio.create_task(getter(q, f"g{i}", got)) for i in range(n)]
        await asyncio.sleep(0)
        q.put_nowait("item")
        gs[0].cancel("late")
        await asyncio.gather(*gs, return_exceptions=True)
        log(n, "getters: got", got, "qsize", q.qsize())
    q = asyncio.Queue()
    got = []
    gs = [asyncio.create_task(getter(q, f"h{i}", got)) for i in range(3)]
    await asyncio.sleep(0)
    q.put_nowait("a")
    q.put_nowait("b")
    gs[1].cancel()
    gs[0].cancel()
    await asyncio.sleep(0)
    log("two puts, two woken cancelled: got", got, "qsize", q.qsize())
    q.put_nowait("c")
    await asyncio.gather(*gs, return_exceptions=True)
    log("  got", got, "qsize", q.qsize())

    q = asyncio.Queue(1)
    q.put_nowait("full")
    ps = [asyncio.create_task(putter(q, f"p{i}", f"x{i}")) for i in range(2)]
    await asyncio.sleep(0)
    log("took", q.get_nowait())
    ps[0].cancel()
    await asyncio.gather(*ps, return_exceptions=True)
    log("  qsize", q.qsize(), "item", q.get_nowait())


asyncio.run(main())
