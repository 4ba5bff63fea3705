# Request handlers that offload blocking lookups with to_thread: the
# thread sees the handler's context variables (to_thread copies the
# context), each request its own, and a TaskGroup child sees what its
# parent had set when it was spawned; an exception raised in the thread
# is raised at the await. An export whose task is cancelled while its
# thread is blocked: the await raises at once, the thread runs on with the
# context it was given, its result is dropped, and asyncio.run() waits
# for it at exit (shutdown_default_executor) -- the program prints what
# the thread saw only after run() returns.
import asyncio
import contextvars
import threading

from probe import d, log, restart

request_id = contextvars.ContextVar("request_id", default="-")
tenant = contextvars.ContextVar("tenant", default="none")
seen = []


def lookup(key):
    if key == "missing":
        raise KeyError(key)
    return f"{key}@{request_id.get()}/{tenant.get()}"


async def handle(rid, key):
    request_id.set(rid)
    try:
        return await asyncio.to_thread(lookup, key)
    except KeyError as e:
        return "error " + d(e)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    tenant.set("acme")
    results = await asyncio.gather(handle("r1", "a"), handle("r2", "b"), handle("r3", "missing"))
    log("results", results)
    log("main still has", request_id.get(), tenant.get())

    async def batch():
        request_id.set("batch-1")
        async with asyncio.TaskGroup() as tg:
            first = tg.create_task(asyncio.to_thread(lookup, "x"))
            request_id.set("batch-2")
            second = tg.create_task(asyncio.to_thread(lookup, "y"))
        log("batch", first.result(), second.result())

    await asyncio.create_task(batch())

    gate = threading.Event()
    started = asyncio.Event()

    def export():
        loop.call_soon_threadsafe(started.set)
        gate.wait()
        seen.append(request_id.get())
        return "exported"

    async def job():
        request_id.set("job-7")
        try:
            return await asyncio.to_thread(export)
        except asyncio.CancelledError as e:
            log("job cancelled:", d(e))
            raise

    t = asyncio.create_task(job())
    await started.wait()
    log("export started, cancelling")
    t.cancel("shutdown")
    try:
        await t
    except asyncio.CancelledError:
        log("main: job cancelled", t.cancelled(), "thread saw", seen)
    gate.set()
    log("main returns")


asyncio.run(main())
print("after run: thread saw", seen)
