# A service shuts down: a producer blocked on a full Queue, a join()er and
# a consumer holding an item; shutdown(immediate=True) drops the queued
# items, fails the blocked putter, and join() is released once the
# consumer's task_done() brings the count to 0. main then returns while
# background tasks still run: asyncio.run cancels them and waits for their
# cleanups (one swallows the cancellation and finishes late, one fails
# while cleaning up and is reported to the exception handler).
import asyncio
import re

LOOP = None
T0 = 0.0


def log(*a):
    print(f"{LOOP.time() - T0:.1f}", *a)


def d(e):
    if e is None:
        return "None"
    if isinstance(e, asyncio.CancelledError):
        return f"Cancelled({e.args[0] if e.args else ''})"
    return f"{type(e).__name__}({e.args[0] if e.args else ''})"


def handler(loop, ctx):
    log("handler:", ctx["message"], d(ctx.get("exception")),
        "task", ctx["task"].get_name() if "task" in ctx else None)


async def main():
    global LOOP, T0
    LOOP = asyncio.get_running_loop()
    T0 = LOOP.time()
    LOOP.set_exception_handler(handler)
    q = asyncio.Queue(maxsize=2)

    async def producer():
        for i in range(5):
            try:
                await q.put(i)
            except asyncio.QueueShutDown:
                log("producer: shut down before", i)
                return
            log("put", i)

    async def joiner():
        await q.join()
        log("join released, qsize", q.qsize())

    async def consumer():
        item = await q.get()
        log("consumer got", item)
        await asyncio.sleep(0.2)
        q.task_done()
        log("consumer task_done")
        try:
            await q.get()
        except asyncio.QueueShutDown:
            log("consumer: shut down")

    async def background():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)
            log("background cleanup done")
            raise

    async def failing():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)
            raise RuntimeError("cleanup failed")

    async def stubborn():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            log("stubborn ignores the cancel")
        await asyncio.sleep(0.3)
        log("stubborn done")
        return "late"

    tasks = [asyncio.create_task(f(), name=f.__name__)
             for f in (producer, joiner, consumer, background, failing, stubborn)]
    await asyncio.sleep(0.1)
    log("before:", re.sub(r" at 0x[0-9a-f]+", "", repr(q)))
    q.shutdown(immediate=True)
    log("after: ", re.sub(r" at 0x[0-9a-f]+", "", repr(q)))
    await asyncio.sleep(0.2)
    log("main returns; pending", sorted(t.get_name() for t in tasks if not t.done()))
    return "main-result"


print("run returned", asyncio.run(main()))
