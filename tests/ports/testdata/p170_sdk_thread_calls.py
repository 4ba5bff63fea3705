# A blocking SDK runs its callbacks on a thread of its own and calls into
# the service's loop with run_coroutine_threadsafe, waiting on the
# concurrent future: a lookup that returns, one that raises (the thread
# gets the exception), one too slow for result(timeout=) that the thread
# then cancels (the task sees the cancellation on the loop), and one the
# loop cancels itself (the thread gets concurrent.futures'
# CancelledError). Then an uploader runs in a thread pool and reports
# progress with call_soon_threadsafe into an asyncio.Queue, waiting for
# the loop's ack (a threading.Event) after each item; the service awaits
# the pool's future with asyncio.wrap_future. The thread's lines are
# kept in a list (with loop.time() read on the thread) and printed after
# it returns, so no line races another.
import asyncio
import concurrent.futures
import threading

import probe
from probe import d, log, restart

thread_log = []
tasks = {}


def tlog(loop, *a):
    thread_log.append(" ".join([f"{loop.time() - probe._t0:.1f}", *map(str, a)]))


async def lookup(key, delay):
    await asyncio.sleep(delay)
    if key == "bad":
        raise KeyError(key)
    return key.upper()


async def slow(name, started):
    tasks[name] = asyncio.current_task()
    started.set()
    try:
        await asyncio.sleep(1.0)
    except asyncio.CancelledError:
        log(name, "cancelled on the loop")
        raise
    return "never"


def sdk(loop, s1_started, s2_started):
    f = asyncio.run_coroutine_threadsafe(lookup("a", 0.1), loop)
    tlog(loop, "a ->", f.result(timeout=1))
    f = asyncio.run_coroutine_threadsafe(lookup("bad", 0.12), loop)
    try:
        f.result(timeout=1)
    except KeyError as e:
        tlog(loop, "bad ->", d(e))
    f = asyncio.run_coroutine_threadsafe(slow("s1", s1_started), loop)
    try:
        f.result(timeout=0.2)
    except TimeoutError:
        tlog(loop, "s1 timed out; cancel ->", f.cancel(), "cancelled", f.cancelled())
    f = asyncio.run_coroutine_threadsafe(slow("s2", s2_started), loop)
    try:
        f.result(timeout=2)
    except concurrent.futures.CancelledError:
        tlog(loop, "s2 cancelled by the loop")
    return "sdk done"


def upload(loop, q, acks):
    for i in range(3):
        loop.call_soon_threadsafe(q.put_nowait, f"part{i}")
        acks[i].wait()
    return "uploaded 3 parts"


async def main():
    loop = asyncio.get_running_loop()
    restart()
    s1_started, s2_started = asyncio.Event(), asyncio.Event()
    thread = asyncio.create_task(asyncio.to_thread(sdk, loop, s1_started, s2_started))
    await s1_started.wait()
    log("s1 running on the loop")
    await s2_started.wait()
    log("s2 running on the loop")
    await asyncio.sleep(0.1)
    log("loop cancels s2")
    tasks["s2"].cancel()
    log("thread says", await thread)
    log("s1 task cancelled", tasks["s1"].cancelled(), "s2 task cancelled", tasks["s2"].cancelled())
    for line in thread_log:
        print("  thread:", line)

    restart()
    q = asyncio.Queue()
    acks = [threading.Event() for _ in range(3)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        cf = pool.submit(upload, loop, q, acks)
        for i in range(3):
            item = await q.get()
            log("progress", item)
            await asyncio.sleep(0.1)
            acks[i].set()
        log("wrap_future ->", await asyncio.wrap_future(cf))


asyncio.run(main())
