# A thumbnail service offloading work to a ThreadPoolExecutor of its own
# with one worker: jobs queue behind it; a job whose future is cancelled
# while still queued never runs, one cancelled while running finishes in
# its thread with its result dropped; the next queued job starts once
# the worker is free. The default executor serves to_thread; after
# shutdown_default_executor() run_in_executor(None, ...) is refused, and
# the shut-down pool refuses new jobs. run_in_executor passes no context
# variables on (the pool's thread sees the default), to_thread does.
import asyncio
import concurrent.futures
import contextvars
import threading

from probe import d, log, restart

ran = []
request_id = contextvars.ContextVar("request_id", default="no-request")


def make_job(loop, name, started, gate):
    def job():
        loop.call_soon_threadsafe(started.set)
        gate.wait()
        ran.append(name)
        return name.upper()

    return job


async def main():
    restart()
    loop = asyncio.get_running_loop()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    gates = {n: threading.Event() for n in "abc"}
    started = {n: asyncio.Event() for n in "abc"}
    futs = {n: loop.run_in_executor(pool, make_job(loop, n, started[n], gates[n])) for n in "abc"}
    await started["a"].wait()
    log("a running; cancelling b (queued) and a (running)")
    log("cancel b", futs["b"].cancel(), "cancel a", futs["a"].cancel())
    gates["a"].set()
    await started["c"].wait()
    log("c started, ran", ran)
    gates["c"].set()
    log("c result", await futs["c"])
    log("cancelled", [futs[n].cancelled() for n in "abc"], "ran", ran)

    request_id.set("req-7")
    log("pool job sees", await loop.run_in_executor(pool, request_id.get), "to_thread sees", await asyncio.to_thread(request_id.get))
    log("to_thread", await asyncio.to_thread(sum, [1, 2, 3]))
    await loop.shutdown_default_executor()
    try:
        await loop.run_in_executor(None, sum, [1])
    except RuntimeError as e:
        log("after shutdown_default_executor:", d(e))
    pool.shutdown(wait=True)
    try:
        await loop.run_in_executor(pool, sum, [1])
    except RuntimeError as e:
        log("pool shut down:", d(e))
    gates["b"].set()
    log("ran", ran)


asyncio.run(main())
