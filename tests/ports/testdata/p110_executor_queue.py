# Blocking jobs on an executor of the application's own, a one-worker
# ThreadPoolExecutor (a serial queue, as for a database handle that is
# not thread-safe): run_in_executor queues three jobs; the one waiting in
# the queue is cancelled and never runs; the running one is cancelled --
# its await is over at once but the thread finishes it and its result is
# dropped; the next job then starts. After executor.shutdown() a new job
# is refused at once with RuntimeError. The threads tell the loop they
# started through call_soon_threadsafe.
import asyncio
import concurrent.futures
import threading

from probe import d, log, restart

ran = []


async def main():
    loop = asyncio.get_running_loop()
    restart()
    ex = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    gates = {n: threading.Event() for n in "abc"}
    started = {n: asyncio.Event() for n in "abc"}

    def on_start(name):
        log("thread starts", name)
        started[name].set()

    def job(name):
        loop.call_soon_threadsafe(on_start, name)
        gates[name].wait()
        ran.append(name)
        return name.upper()

    fa, fb, fc = (loop.run_in_executor(ex, job, n) for n in "abc")
    await started["a"].wait()
    fc.cancel()
    fa.cancel()
    log("cancelled a (running) and c (queued):", fa.cancelled(), fc.cancelled())
    gates["a"].set()
    await started["b"].wait()
    log("b started, ran so far", ran)
    gates["b"].set()
    log("b result", await fb)
    try:
        await fa
    except asyncio.CancelledError as e:
        log("a awaited:", d(e))
    ex.shutdown(wait=True)
    log("executor shut down, ran", ran, "c started", started["c"].is_set())
    try:
        fd = loop.run_in_executor(ex, job, "d")
        await fd
    except RuntimeError as e:
        log("after shutdown:", d(e))


asyncio.run(main())
