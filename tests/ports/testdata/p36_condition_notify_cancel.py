# Condition.wait cancelled while being notified: the cancelled waiter
# re-acquires the lock, raises its CancelledError, and passes the
# notification on to the next waiter (COND-2, 3.13). The cancel lands
# before notify, right after it, or after the notifier released the lock.
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


async def waiter(cond, name, got):
    me = asyncio.current_task()
    async with cond:
        try:
            await cond.wait()
            got.append(name)
            log("   ", name, "notified")
        except asyncio.CancelledError as e:
            log("   ", name, "cancelled", d(e), "holds lock", cond.locked(), "cancelling", me.cancelling())
            raise


async def main():
    restart()
    for when in ("before notify", "after notify", "after release", "both notified"):
        cond = asyncio.Condition()
        got = []
        ws = [asyncio.create_task(waiter(cond, f"w{i}", got)) for i in range(3)]
        await asyncio.sleep(0)
        log(when)
        async with cond:
            if when == "before notify":
                ws[0].cancel("c")
            cond.notify(2 if when == "both notified" else 1)
            if when in ("after notify", "both notified"):
                ws[0].cancel("c")
        if when == "after release":
            ws[0].cancel("c")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        log("  got", got, state(cond))
        for w in ws:
            w.cancel()
        await asyncio.gather(*ws, return_exceptions=True)


asyncio.run(main())
