# A Barrier party cancelled mid-wait leaves the count, so the barrier still
# needs a full set of arrivals; one cancelled in the iteration the last
# party arrives has already been released and passes the cancellation on
# (BAR-1, BAR-2, COND-2).
import asyncio

from probe import d, log, restart


async def party(b, name):
    try:
        i = await b.wait()
        log("   ", name, "passed as", i)
        return i
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e), "n_waiting", b.n_waiting)
        raise


async def main():
    restart()
    b = asyncio.Barrier(3)
    a1 = asyncio.create_task(party(b, "a1"))
    a2 = asyncio.create_task(party(b, "a2"))
    await asyncio.sleep(0)
    log("waiting", b.n_waiting)
    a1.cancel("leave")
    await asyncio.sleep(0)
    log("after cancel waiting", b.n_waiting, "broken", b.broken)
    a3 = asyncio.create_task(party(b, "a3"))
    await asyncio.sleep(0)
    log("waiting", b.n_waiting)
    a4 = asyncio.create_task(party(b, "a4"))
    await asyncio.sleep(0)
    a2.cancel("too late")
    await asyncio.gather(a1, a2, a3, a4, return_exceptions=True)
    log("round 1 waiting", b.n_waiting, "broken", b.broken)

    c = [asyncio.create_task(party(b, f"c{i}")) for i in range(2)]
    await asyncio.sleep(0)
    c[0].cancel()
    last = asyncio.create_task(party(b, "last"))
    await asyncio.sleep(0)
    log("waiting", b.n_waiting)
    await b.abort()
    await asyncio.gather(*c, last, return_exceptions=True)
    log("aborted", b.broken, [d(t.exception()) if not t.cancelled() else "C" for t in (*c, last)])


asyncio.run(main())
