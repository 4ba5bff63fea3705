# An Event set from a loop callback (call_later with functools.partial)
# while two coroutines wait on it through asyncio.wait, from "Python
# asyncio Events", https://demo2s.com/python/python-asyncio-events.html
# (after PyMOTW's asyncio_event.py). Adapted for 3.13: asyncio.run
# instead of get_event_loop/run_until_complete, asyncio.wait given tasks
# (it no longer takes coroutines), log() instead of print, and coro2
# created first, so the waiting order is fixed as the page's output shows
# it; the coroutines return a value and wait()'s done set is reported.
import asyncio
import functools

from probe import log, restart


def set_event(event):
    log("setting event in callback")
    event.set()


async def coro1(event):
    log("coro1 waiting for event")
    await event.wait()
    log("coro1 triggered")
    return "coro1"


async def coro2(event):
    log("coro2 waiting for event")
    await event.wait()
    log("coro2 triggered")
    return "coro2"


async def main(loop):
    restart()
    # Create a shared event.
    event = asyncio.Event()
    log("event start state: {}".format(event.is_set()))
    handle = loop.call_later(0.1, functools.partial(set_event, event))
    tasks = [asyncio.create_task(coro2(event)), asyncio.create_task(coro1(event))]
    done, pending = await asyncio.wait(tasks)
    log("event end state: {}".format(event.is_set()))
    log("done", sorted(t.result() for t in done), "pending", len(pending), "handle cancelled", handle.cancelled())
    # a second wait, with a timeout shorter than the callback's delay
    event.clear()
    loop.call_later(0.3, functools.partial(set_event, event))
    waiter = asyncio.create_task(coro1(event))
    done, pending = await asyncio.wait([waiter], timeout=0.2)
    log("after the timeout: done", len(done), "pending", len(pending))
    await waiter
    log("event end state: {}".format(event.is_set()))



async def entry():
    await main(asyncio.get_running_loop())


asyncio.run(entry())
