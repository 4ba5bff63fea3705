# A synchronous application keeps one event loop running forever in a
# background thread and hands it coroutines with
# run_coroutine_threadsafe, blocking on the concurrent futures: one
# result, a coroutine that raises (result() re-raises, exception() returns
# it), a batch waited with concurrent.futures.wait(timeout=) whose
# stragglers are cancelled (their tasks see the cancellation), a
# ticker task started on the loop and left running; at exit a shutdown
# coroutine cancels what is left and gathers it, then
# call_soon_threadsafe(loop.stop), join, close. Only the main thread
# prints, each line right after a blocking wait, stamped with
# loop.time() (the loop's clock, read from the main thread); the loop's
# tasks note what they see in a list.
import asyncio
import concurrent.futures
import threading

from probe import d

notes = []


async def fetch(key, delay):
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        notes.append(f"{key} cancelled")
        raise
    if key == "bad":
        raise LookupError(key)
    return key.upper()


async def ticker():
    n = 0
    try:
        while True:
            await asyncio.sleep(0.07)
            n += 1
    except asyncio.CancelledError:
        notes.append(f"ticker cancelled after {n} ticks")
        raise


async def shutdown():
    me = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not me]
    for t in rest:
        t.cancel()
    res = await asyncio.gather(*rest, return_exceptions=True)
    return len(res)


def main():
    loop = asyncio.new_event_loop()
    t0 = loop.time()

    def log(*a):
        print(f"{loop.time() - t0:.1f}", *a)

    th = threading.Thread(target=loop.run_forever)
    th.start()
    asyncio.run_coroutine_threadsafe(ticker(), loop)
    cf = asyncio.run_coroutine_threadsafe(fetch("a", 0.16), loop)
    log("a ->", cf.result(timeout=1))
    cf = asyncio.run_coroutine_threadsafe(fetch("bad", 0.04), loop)
    try:
        cf.result()
    except LookupError as e:
        log("bad raised", d(e), "exception()", d(cf.exception()))
    batch = {k: asyncio.run_coroutine_threadsafe(fetch(k, dl), loop) for k, dl in [("x", 0.05), ("y", 0.5), ("z", 0.12), ("w", 0.9)]}
    done, not_done = concurrent.futures.wait(batch.values(), timeout=0.2)
    log("batch done", sorted(k for k, f in batch.items() if f in done), "pending", sorted(k for k, f in batch.items() if f in not_done))
    for k, f in sorted(batch.items()):
        if f in not_done:
            log("cancel", k, "->", f.cancel(), "cancelled", f.cancelled())
    try:
        batch["y"].result()
    except concurrent.futures.CancelledError:
        log("y result raises CancelledError")
    n = asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=1)
    log("shutdown gathered", n)
    loop.call_soon_threadsafe(loop.stop)
    th.join()
    log("loop running", loop.is_running(), "tasks left", len(asyncio.all_tasks(loop)))
    loop.close()
    log("closed", loop.is_closed(), "notes", notes)


main()
