# Workers held at a start line by one asyncio.Event, from "TIL - Python's
# asyncio.Event Lets Coroutines Signal Each Other Without Polling",
# https://www.madil.in/til-pythons-asyncio-event-lets-coroutines-signal-each-other-without-polling/
# and its closing note that Event.clear() resets it for reuse: after the
# first round the controller clears the event and fires it again for a
# second round. Adapted: log() instead of print, each worker's work takes
# its own time (0.1 + 0.005 * i s) so that no two finish together.
import asyncio

from probe import log, restart


async def worker(name: str, i: int, ready: asyncio.Event, rounds: int):
    for r in range(rounds):
        log(f"{name}: waiting for start signal (round {r})")
        await ready.wait()
        log(f"{name}: started work")
        await asyncio.sleep(0.1 + 0.005 * i)
        log(f"{name}: done")
        # wait for the controller to clear the event before the next round
        while r < rounds - 1 and ready.is_set():
            await asyncio.sleep(0.01)
    return name


async def main():
    restart()
    ready = asyncio.Event()
    tasks = [asyncio.create_task(worker(f"W{i}", i, ready, 2)) for i in range(3)]
    await asyncio.sleep(0.2)  # simulate startup delay
    log("Controller: firing start signal")
    ready.set()  # unblocks ALL waiting coroutines at once
    await asyncio.sleep(0.06)
    log("Controller: is_set", ready.is_set(), "clearing")
    ready.clear()
    await asyncio.sleep(0.23)
    log("Controller: firing again")
    ready.set()
    log("results", await asyncio.gather(*tasks))


asyncio.run(main())
