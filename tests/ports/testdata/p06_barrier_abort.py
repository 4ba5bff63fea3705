# A Barrier(3) used for three rounds: (1) three parties pass; (2) a party
# waiting is cancelled (the count goes back down), two wait, a supervisor
# aborts, and a late party finds it broken; (3) after reset, three pass;
# (4) on a Barrier(2), a released party cancelled before it runs raises
# CancelledError while its partner passes, and two newcomers wait for the
# draining to end, then pass together.
import asyncio

from probe import log, restart


async def main():
    restart()
    b = asyncio.Barrier(3)

    async def party(name, delay):
        await asyncio.sleep(delay)
        log(name, "arrives, n_waiting", b.n_waiting, "broken", b.broken)
        try:
            i = await b.wait()
            log(name, "passed with index", i)
        except asyncio.BrokenBarrierError as e:
            log(name, "broken:", e)
        except asyncio.CancelledError:
            log(name, "cancelled, n_waiting", b.n_waiting)
            raise

    r1 = [asyncio.create_task(party(f"r1-{k}", 0.1 * (k + 1))) for k in range(3)]
    await asyncio.gather(*r1)
    log("round 1 over, n_waiting", b.n_waiting)

    restart()
    quitter = asyncio.create_task(party("quitter", 0.1))
    r2 = [asyncio.create_task(party(f"r2-{k}", 0.2 + 0.1 * k)) for k in range(2)]
    await asyncio.sleep(0.12)
    quitter.cancel()
    await asyncio.sleep(0)
    await asyncio.sleep(0.3)  # r2-0 (0.2) and r2-1 (0.3) are waiting now
    log("supervisor aborts, n_waiting", b.n_waiting)
    await b.abort()
    log("after abort, n_waiting", b.n_waiting, "broken", b.broken)
    late = asyncio.create_task(party("late", 0.1))
    await asyncio.gather(*r2, late, return_exceptions=True)

    restart()
    await b.reset()
    log("reset, broken", b.broken)
    r3 = [asyncio.create_task(party(f"r3-{k}", 0.1 * (3 - k))) for k in range(3)]
    await asyncio.gather(*r3)
    log("round 3 over")

    restart()
    b2 = asyncio.Barrier(2)

    async def party2(name):
        try:
            i = await b2.wait()
            log(name, "passed", i)
        except asyncio.CancelledError:
            log(name, "cancelled, n_waiting", b2.n_waiting, "broken", b2.broken)
            raise

    A = asyncio.create_task(party2("A"))
    await asyncio.sleep(0)
    B = asyncio.create_task(party2("B"))
    await asyncio.sleep(0)
    A.cancel()
    C = asyncio.create_task(party2("C"))
    D = asyncio.create_task(party2("D"))
    await asyncio.gather(A, B, C, D, return_exceptions=True)
    log("round 4: A cancelled", A.cancelled(), "n_waiting", b2.n_waiting)


asyncio.run(main())
