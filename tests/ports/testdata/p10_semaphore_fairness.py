# Semaphore(2) held by main; five waiters queue. w2 is cancelled while
# queued; then main releases one unit (reserved for w1) and cancels w1 in
# the same step, before it runs: the unit must go to w3, not be lost, and
# a newcomer n1 arriving in that step queues behind w4 and w5. Then two
# units released at once to four waiters whose first two are cancelled
# before they run go to the other two (3.13 wakes as many as the value
# allows); and a Lock whose woken waiter is cancelled goes to the next
# waiter, not to a newcomer.
import asyncio

from probe import log, restart


async def main():
    restart()
    sem = asyncio.Semaphore(2)
    await sem.acquire()
    await sem.acquire()

    async def w(name, hold):
        log(name, "wants, locked", sem.locked())
        try:
            async with sem:
                log(name, "acquired")
                await asyncio.sleep(hold)
        except asyncio.CancelledError:
            log(name, "cancelled, locked", sem.locked())
            raise
        log(name, "released")

    ws = [asyncio.create_task(w(f"w{k}", 0.2)) for k in range(1, 6)]
    await asyncio.sleep(0)
    ws[1].cancel()
    await asyncio.sleep(0)
    sem.release()
    ws[0].cancel()
    n1 = asyncio.create_task(w("n1", 0.2))
    log("released one, cancelled w1, locked", sem.locked())
    await asyncio.sleep(0.1)
    sem.release()
    log("released the second")
    res = await asyncio.gather(*ws, n1, return_exceptions=True)
    log("outcomes", ["cancelled" if isinstance(r, asyncio.CancelledError) else r for r in res])
    log("locked", sem.locked())

    sem0 = asyncio.Semaphore(0)

    async def s(name):
        try:
            await sem0.acquire()
            log(name, "acquired")
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise

    ss = [asyncio.create_task(s(f"s{i}")) for i in range(4)]
    await asyncio.sleep(0)
    sem0.release()
    sem0.release()
    ss[0].cancel()
    ss[1].cancel()
    await asyncio.sleep(0)
    log("sem0 locked", sem0.locked())
    await asyncio.gather(*ss, return_exceptions=True)

    lock = asyncio.Lock()
    await lock.acquire()

    async def lw(name):
        try:
            async with lock:
                log(name, "has lock")
                await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise

    a = asyncio.create_task(lw("A"))
    b = asyncio.create_task(lw("B"))
    await asyncio.sleep(0)
    lock.release()
    a.cancel()
    c = asyncio.create_task(lw("C"))
    log("after release: locked", lock.locked())
    await asyncio.gather(a, b, c, return_exceptions=True)
    log("lock locked", lock.locked())


asyncio.run(main())
