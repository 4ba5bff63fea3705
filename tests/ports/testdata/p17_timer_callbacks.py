# A small scheduler on loop callbacks: call_soon callbacks run in FIFO
# order and one scheduled from a callback waits for the next iteration
# (after the task step already queued); a cancelled handle never runs; a
# call_later with a negative delay joins the ready queue behind what was
# already there; a heartbeat reschedules itself with call_later; a retry
# timer is cancelled by an ack timer; call_at fires at an absolute
# deadline; a Future resolved by a timer is awaited; cancelling a handle
# that already ran only marks it cancelled.
import asyncio

from probe import log, rel, restart


async def main():
    restart()
    loop = asyncio.get_running_loop()
    order = []

    def soon(name, then=None):
        order.append(name)
        if then:
            loop.call_soon(soon, then)

    loop.call_soon(soon, "a", "c")
    loop.call_soon(soon, "b")
    dropped = loop.call_soon(soon, "dropped")
    dropped.cancel()
    await asyncio.sleep(0)
    order.append("main")
    await asyncio.sleep(0)
    log("order", order, "dropped cancelled", dropped.cancelled())

    order.clear()
    loop.call_later(-1, soon, "past-timer")
    loop.call_soon(soon, "soon")
    await asyncio.sleep(0)
    order.append("main")
    await asyncio.sleep(0)
    log("order", order)

    restart()
    t0 = loop.time()
    beats = 0

    def heartbeat():
        nonlocal beats
        beats += 1
        log("beat", beats)
        if beats < 4:
            loop.call_later(0.1, heartbeat)

    def retry():
        log("retry fired")

    def ack():
        retry_h.cancel()
        log("ack: retry cancelled", retry_h.cancelled(), "was due at", rel(retry_h.when()))

    def deadline():
        log("deadline reached, beats so far", beats)

    loop.call_later(0.1, heartbeat)
    retry_h = loop.call_later(0.3, retry)
    loop.call_later(0.13, ack)
    dl = loop.call_at(t0 + 0.26, deadline)
    log("deadline at", rel(dl.when()))

    fut = loop.create_future()
    loop.call_later(0.37, fut.set_result, "pong")
    log("awaiting pong")
    log("got", await fut)
    await asyncio.sleep(0.1)
    log("beats", beats)
    dl.cancel()
    log("late cancel marks", dl.cancelled())


asyncio.run(main())
