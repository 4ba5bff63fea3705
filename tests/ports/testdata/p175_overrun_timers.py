# A frame scheduler whose one callback overruns: timers at distinct
# offsets, one of which blocks the loop (time.sleep) past the deadlines
# of the next three, so they all fall due in one iteration and run in
# deadline order. A timer in that batch cancels a later one of the same
# batch (already moved to the ready queue: it does not run) and one not
# due yet; a call_soon and a call_later(0) from inside the batch run
# after it, in the next iteration, call_soon first; a task woken by a
# timer of the batch resumes after the batch too. TimerHandle.when()
# keeps the scheduled deadline; cancelled() tells which were cancelled.
import asyncio
import time

from probe import log, rel, restart


async def main():
    loop = asyncio.get_running_loop()
    restart()
    order = []
    handles = {}
    wake = loop.create_future()

    def fire(name):
        order.append(name)
        log("fire", name)
        if name == "slow":
            time.sleep(0.1)
        if name == "b":
            handles["d"].cancel()
            handles["f"].cancel()
            loop.call_soon(fire, "soon-from-b")
            handles["late"] = loop.call_later(0, fire, "late0")
            wake.set_result("b")
        if name == "c":
            loop.call_soon(fire, "soon-from-c")

    for name, delay in [("slow", 0.1), ("b", 0.12), ("c", 0.13), ("d", 0.14), ("e", 0.16), ("f", 0.37), ("g", 0.43)]:
        handles[name] = loop.call_later(delay, fire, name)

    async def sleeper():
        log("sleeper woke by", await wake)
        order.append("sleeper")

    s = asyncio.create_task(sleeper())
    await asyncio.sleep(0.6)
    await s
    log("order", order)
    log("when", [rel(handles[n].when()) for n in ("slow", "b", "d", "f")])
    log("cancelled", sorted(n for n, h in handles.items() if h.cancelled()))


asyncio.run(main())
