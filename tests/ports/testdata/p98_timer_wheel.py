# A job scheduler on loop timers, as cron-like services write it: jobs
# registered with call_at at absolute deadlines computed from loop.time();
# TimerHandle.when() reports them; a job cancels another job's handle from
# its own callback (the cancelled one never runs, even though it was due
# in the same iteration); a job that reschedules itself with call_at from
# its previous deadline (no drift); call_soon from a timer callback runs
# after the other timers already due; a batch of jobs due at one deadline
# (a "tick" that several subscribers registered for); cancelling every
# handle of a tick leaves nothing running; call_later with a zero delay
# runs after call_soon callbacks queued before it.
import asyncio

from probe import log, rel, restart


async def main():
    loop = asyncio.get_running_loop()
    restart()
    t0 = loop.time()
    ran = []

    def job(name):
        ran.append(name)
        log("job", name)

    handles = {}
    for name, at in (("backup", 0.3), ("report", 0.1), ("cleanup", 0.2), ("rotate", 0.16)):
        handles[name] = loop.call_at(t0 + at, job, name)
    log("scheduled", sorted((rel(h.when()), n) for n, h in handles.items()))

    def cancel_backup():
        handles["backup"].cancel()
        log("cancelled backup, cancelled", handles["backup"].cancelled())
        loop.call_soon(job, "soon-after-cancel")

    loop.call_at(t0 + 0.26, cancel_backup)
    await asyncio.sleep(0.4)
    log("ran", ran)

    restart()
    t0 = loop.time()
    ran.clear()
    beats = []

    def beat(n, when):
        beats.append(rel(when))
        if n < 3:
            nxt = when + 0.1
            loop.call_at(nxt, beat, n + 1, nxt)

    loop.call_at(t0 + 0.1, beat, 1, t0 + 0.1)
    await asyncio.sleep(0.46)
    log("beats at", beats)

    restart()
    t0 = loop.time()
    order = []
    tick = t0 + 0.2
    for name in ("a", "b", "c"):
        loop.call_at(tick, order.append, name)
    h_x = loop.call_at(tick, order.append, "x")
    loop.call_at(t0 + 0.1, h_x.cancel)
    await asyncio.sleep(0.3)
    log("three at one deadline", order)

    order.clear()
    tick = loop.time() + 0.2
    for name in ("w1", "w2", "w3", "w4", "w5"):
        loop.call_at(tick, order.append, name)
    await asyncio.sleep(0.3)
    log("five at one deadline", order)

    order.clear()
    tick = loop.time() + 0.1
    hs = [loop.call_at(tick, order.append, n) for n in range(4)]
    for h in hs:
        h.cancel()
    await asyncio.sleep(0.2)
    log("all cancelled", order, [h.cancelled() for h in hs])

    order.clear()
    loop.call_soon(order.append, "soon1")
    loop.call_later(0, order.append, "later0")
    loop.call_soon(order.append, "soon2")
    loop.call_at(loop.time() - 1, order.append, "past")
    await asyncio.sleep(0)
    order.append("main")
    await asyncio.sleep(0)
    log("zero delays", order)


asyncio.run(main())
