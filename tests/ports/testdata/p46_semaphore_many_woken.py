# Semaphore(0) with four waiters: three releases wake three, two of the
# woken are cancelled before they run, a newcomer arrives meanwhile; every
# acquire attempt then wakes as many as the value allows (SEM-2, 3.13
# gh-111693), so the units pass on in FIFO order and nobody barges.
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


async def main():
    restart()
    sem = asyncio.Semaphore(0)
    order = []

    async def user(name, hold):
        try:
            await sem.acquire()
        except asyncio.CancelledError as e:
            log("   ", name, "cancelled", d(e), state(sem))
            raise
        order.append(name)
        log("   ", name, "acquired", state(sem))
        for _ in range(hold):
            await asyncio.sleep(0)
        sem.release()

    ws = [asyncio.create_task(user(f"u{i}", i)) for i in range(5)]
    await asyncio.sleep(0)
    for _ in range(3):
        sem.release()
    log("released 3", state(sem))
    ws[0].cancel("a")
    ws[2].cancel("b")
    late = asyncio.create_task(user("late", 0))
    await asyncio.sleep(0)
    log("after one iteration", state(sem), "order", order)
    await asyncio.gather(*ws, late, return_exceptions=True)
    log("order", order, state(sem))


asyncio.run(main())
