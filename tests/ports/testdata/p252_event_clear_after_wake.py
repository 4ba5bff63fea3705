# "Synchronization in Async Python: Understanding and Using asyncio.Event",
# https://runebook.dev/en/docs/python/library/asyncio-sync/event
# The page's corrected waiter clears the event right after waking "for
# future use". The surprise: set() wakes every waiter at once, so B
# still proceeds after A has cleared it; clear() only affects waits that
# start later. Then is_set() checks in a loop versus wait(): a set()
# followed by clear() before the waiter runs still wakes it. Adapted:
# setter delays of 0.1 s, a third waiter C that starts after the clear.
import asyncio

from probe import d, log, restart


async def waiter(event, name):
    log(f"Task {name}: Waiting for signal...")
    await event.wait()
    log(f"Task {name}: Signal received! is_set", event.is_set())
    event.clear()  # Clear for future use


async def setter(event, delay):
    log(f"Setter: Sleeping for {delay} seconds...")
    await asyncio.sleep(delay)
    log("Setter: Setting the event!")
    event.set()


async def late(event):
    await asyncio.sleep(0.2)
    try:
        async with asyncio.timeout(0.2):
            await waiter(event, "C")
    except TimeoutError:
        log("Task C: no signal, the event was cleared")


async def main():
    restart()
    event = asyncio.Event()
    await asyncio.gather(waiter(event, "A"), waiter(event, "B"), setter(event, 0.1), late(event))

    restart()
    ev = asyncio.Event()
    w = asyncio.create_task(ev.wait())
    await asyncio.sleep(0)
    ev.set()
    ev.clear()
    log("set then clear; is_set", ev.is_set())
    await asyncio.sleep(0)
    log("the waiter woke anyway:", w.done(), w.result())


asyncio.run(main())
