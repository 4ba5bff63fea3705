# Lock and Semaphore waiters cancelled right after a release woke them, or
# just before it: the wakeup passes on to the next live waiter, nobody
# barges in, and a Semaphore's reserved unit goes back (LOCK-3, LOCK-4,
# SEM-1, SEM-2, 3.13).
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


async def user(prim, name, order):
    try:
        await prim.acquire()
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e))
        raise
    order.append(name)
    await asyncio.sleep(0)
    prim.release()


async def run(prim, label, cancel_at):
    order = []
    await prim.acquire()
    ws = [asyncio.create_task(user(prim, f"w{i}", order)) for i in range(3)]
    await asyncio.sleep(0)
    if cancel_at == "before":
        ws[0].cancel()
    prim.release()
    if cancel_at == "after":
        ws[0].cancel()
    if cancel_at == "two after":
        ws[0].cancel()
        ws[1].cancel()
    late = asyncio.create_task(user(prim, "late", order))
    log(label, cancel_at, "locked", prim.locked(), state(prim))
    await asyncio.gather(*ws, late, return_exceptions=True)
    log("  order", order, "locked", prim.locked(), state(prim))


async def main():
    restart()
    for cancel_at in ("before", "after", "two after"):
        await run(asyncio.Lock(), "lock", cancel_at)
        await run(asyncio.Semaphore(1), "sem", cancel_at)
    sem = asyncio.Semaphore(0)
    order = []
    ws = [asyncio.create_task(user(sem, f"s{i}", order)) for i in range(4)]
    await asyncio.sleep(0)
    sem.release()
    sem.release()
    ws[1].cancel()
    ws[0].cancel()
    log("sem0 two released, two cancelled, locked", sem.locked(), state(sem))
    await asyncio.gather(*ws, return_exceptions=True)
    log("  order", order, state(sem))


asyncio.run(main())
