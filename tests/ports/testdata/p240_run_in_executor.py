# Running blocking functions with loop.run_in_executor(None, ...) while
# the loop stays free, from "Asyncio and Blocking Code: Common Issues and
# the run_in_executor Fix",
# https://runebook.dev/en/docs/python/library/asyncio-eventloop/asyncio.loop.run_in_executor
# (blocking_io_task with time.sleep, awaited from main through the
# default ThreadPoolExecutor), with a ticker showing the loop runs
# meanwhile, and the page's caveat that a timeout around an executor
# future does not stop the thread. Adapted: times in tenths (0.2 and
# 0.3 s instead of 2), the ticker on a fixed schedule (0.07 s, then
# every 0.1 s: it sleeps to its next tick time, so it does not drift;
# main too waits for fixed times after the threads, whose wake-ups take
# real time), the threads' own prints collected in a list (a
# thread has no running loop for log()) and printed sorted at the end.
import asyncio
import threading
import time

from probe import d, log, restart

thread_said = []
lock = threading.Lock()


def blocking_io_task(name, secs):
    """A synchronous function that blocks."""
    with lock:
        thread_said.append(f"[{name}] Starting blocking operation...")
    time.sleep(secs)  # Simulate a slow blocking operation
    with lock:
        thread_said.append(f"[{name}] Blocking operation finished.")
    return f"Result from {name}"


async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


async def ticker(stop):
    n = 0
    while not stop.is_set():
        n += 1
        await sleep_until(0.1 * n - 0.03)
        log("tick", n)
    return n


async def main():
    global T0
    loop = asyncio.get_running_loop()
    restart()
    T0 = loop.time()
    stop = asyncio.Event()
    tick = asyncio.create_task(ticker(stop))
    fa = loop.run_in_executor(None, blocking_io_task, "A", 0.2)
    fb = loop.run_in_executor(None, blocking_io_task, "B", 0.3)
    fa.add_done_callback(lambda f: log("A's future done:", f.result()))
    results = await asyncio.gather(fa, fb)
    log("results", results)

    await sleep_until(0.4)
    try:
        await asyncio.wait_for(loop.run_in_executor(None, blocking_io_task, "C", 0.34), timeout=0.2)
    except TimeoutError as e:
        log("C timed out:", d(e), "but its thread goes on")
    await sleep_until(0.9)
    stop.set()
    log("ticks", await tick)
    for line in sorted(thread_said):
        log(line)


asyncio.run(main())
