# Ctrl-C in asyncio.run (3.11+), sent by the program to itself: the first
# SIGINT cancels the main task, whose cleanup stops the workers and still
# awaits; asyncio.run then raises KeyboardInterrupt and puts the default
# SIGINT handler back. A second run's main that swallows the cancellation
# and returns normally returns its value; a third one, interrupted while
# a timeout is also running, ends with KeyboardInterrupt, not
# TimeoutError.
import asyncio
import os
import signal

from probe import d, log, restart


async def worker(name, q, done):
    try:
        while True:
            item = await q.get()
            await asyncio.sleep(0.05)
            done.append(item)
            q.task_done()
    except asyncio.CancelledError:
        log(name, "cancelled")
        raise


def interrupt_later(delay):
    asyncio.get_running_loop().call_later(delay, os.kill, os.getpid(), signal.SIGINT)


async def service():
    restart()
    q = asyncio.Queue()
    done = []
    workers = [asyncio.create_task(worker(f"w{i}", q, done)) for i in range(2)]
    for i in range(10):
        q.put_nowait(i)
    interrupt_later(0.12)
    try:
        await q.join()
        log("all done")
    except asyncio.CancelledError as e:
        me = asyncio.current_task()
        log("main", d(e), "cancelling", me.cancelling(), "done", done, "left", q.qsize())
        for w in workers:
            w.cancel()
        res = await asyncio.gather(*workers, return_exceptions=True)
        log("workers stopped", [d(r) for r in res])
        await asyncio.sleep(0.05)
        log("cleanup done")
        raise


async def stubborn():
    restart()
    interrupt_later(0.1)
    try:
        await asyncio.sleep(1)
    except asyncio.CancelledError:
        log("stubborn main swallows the interrupt")
    return "kept going"


async def under_timeout():
    restart()
    interrupt_later(0.1)
    try:
        async with asyncio.timeout(0.3):
            await asyncio.sleep(1)
    except TimeoutError:
        log("not a timeout")
    log("not reached")


for main in (service, stubborn, under_timeout):
    try:
        print(main.__name__, "returned", asyncio.run(main()))
    except KeyboardInterrupt:
        print(main.__name__, "raised KeyboardInterrupt")
    print("SIGINT handler is the default again:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
