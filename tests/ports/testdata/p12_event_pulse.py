# Event as a pulse: set() immediately followed by clear() still wakes every
# waiter queued at the time (they return True and see is_set False); a
# waiter arriving after the clear waits for the next set; a waiter with
# wait_for(ev.wait(), 0.1) times out; a waiter woken by the pulse and
# cancelled before it runs raises CancelledError; a
# second set() is a no-op.
import asyncio

from probe import log, restart


async def main():
    restart()
    ev = asyncio.Event()

    async def waiter(name):
        log(name, "waiting, is_set", ev.is_set())
        try:
            r = await ev.wait()
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise
        log(name, "woke", r, "is_set", ev.is_set())

    async def impatient():
        try:
            await asyncio.wait_for(ev.wait(), 0.1)
            log("impatient woke (unexpected)")
        except TimeoutError:
            log("impatient timed out, is_set", ev.is_set())

    w1 = asyncio.create_task(waiter("w1"))
    w2 = asyncio.create_task(waiter("w2"))
    w5 = asyncio.create_task(waiter("w5"))
    await asyncio.sleep(0)
    ev.set()
    ev.clear()
    log("pulsed, is_set", ev.is_set())
    w5.cancel()
    w3 = asyncio.create_task(waiter("w3"))
    imp = asyncio.create_task(impatient())
    await asyncio.sleep(0.2)
    log("set at 0.2")
    ev.set()
    ev.set()
    w4 = asyncio.create_task(waiter("w4"))
    res = await asyncio.gather(w1, w2, w3, w4, imp, w5, return_exceptions=True)
    log("outcomes", ["cancelled" if isinstance(r, asyncio.CancelledError) else r for r in res])


asyncio.run(main())
