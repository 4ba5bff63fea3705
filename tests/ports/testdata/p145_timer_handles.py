# A debouncer, a timer batch and a watchdog built on loop timer handles.
# Each keystroke cancels the pending flush handle and schedules another;
# a handle cancelled after it ran reports cancelled() all the same. Three
# call_at handles due at one instant: the first cancels the second, which
# then does not run although it was already due; what the first
# schedules (call_soon, call_at in the past, call_later(0)) runs on the
# next iteration, the ready callbacks before the timers that came due.
# A watchdog handle re-armed by heartbeats fires when they stop, cancels
# itself while it runs and cancels the worker with a message.
import asyncio

from probe import d, log, rel, restart


async def main():
    restart()
    loop = asyncio.get_running_loop()

    pending = None
    flushed = []

    def flush(text):
        flushed.append(text)
        log("flush", repr(text))

    text = ""
    for ch, gap in [("h", 0.03), ("e", 0.04), ("l", 0.02), ("l", 0.15), ("o", 0.05)]:
        await asyncio.sleep(gap)
        text += ch
        if pending is not None:
            pending.cancel()
        pending = loop.call_later(0.1, flush, text)
    log("typing done, flush due", rel(pending.when()))
    await asyncio.sleep(0.2)
    log("pending cancelled", pending.cancelled())
    pending.cancel()
    log("cancel after it ran: cancelled", pending.cancelled(), "flushed", flushed)

    restart()
    order = []
    handles = {}
    when = loop.time() + 0.1

    def fire(name):
        order.append(name)
        log("timer", name)
        if name == "a":
            handles["b"].cancel()
            loop.call_soon(order.append, "soon-from-a")
            handles["past"] = loop.call_at(loop.time() - 1, order.append, "past-from-a")
            loop.call_soon(order.append, "soon2-from-a")
            loop.call_later(0, order.append, "later0-from-a")

    for name in ["a", "b", "c"]:
        handles[name] = loop.call_at(when, fire, name)
    await asyncio.sleep(0.2)
    log("order", order, "b cancelled", handles["b"].cancelled(), "past when", rel(handles["past"].when()))

    restart()
    state = {}

    def on_watchdog():
        log("watchdog fired, cancelling worker")
        state["dog"].cancel()
        state["worker"].cancel("watchdog")

    async def worker():
        for i in range(5):
            await asyncio.sleep(0.08 if i < 2 else 0.3)
            state["dog"].cancel()
            state["dog"] = loop.call_later(0.2, on_watchdog)
            log("heartbeat", i, "watchdog at", rel(state["dog"].when()))

    state["dog"] = loop.call_later(0.2, on_watchdog)
    state["worker"] = asyncio.create_task(worker())
    try:
        await state["worker"]
    except asyncio.CancelledError as e:
        log("worker", d(e), "dog cancelled", state["dog"].cancelled())


asyncio.run(main())
