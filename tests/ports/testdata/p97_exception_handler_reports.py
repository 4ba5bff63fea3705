# An application installs its own loop exception handler, as services do
# to route asyncio's reports to their logger: it prints the report's
# message (its first words: the handle's repr follows), the exception and
# whether the context names a handle. A call_soon callback that raises,
# a call_later timer that raises, and a done callback that raises are
# each reported and the loop goes on (the next callbacks still run); an
# explicit call_exception_handler with a custom context; a handler that
# itself raises is logged by asyncio (not traced) and the loop goes on;
# a fire-and-forget task that fails is reported once nothing refers to it
# (CPython: when it is collected, here when the last reference goes at
# the end of main; Go: at the loop's close, right after main returns --
# docs/rules.md FUT-10), with the message without the name Go adds.
import asyncio

from probe import d, log, restart

reports = []


def handler(loop, ctx):
    msg = ctx["message"]
    if msg.startswith("Exception in callback"):
        msg = "Exception in callback"
    if msg.startswith("Task exception was never retrieved"):
        msg = "Task exception was never retrieved"
    reports.append(msg)
    if msg == "explode":
        raise RuntimeError("handler bug")
    log("handler:", msg, d(ctx.get("exception")), "handle" if "handle" in ctx else "-")


async def failing_job(name):
    await asyncio.sleep(0.1)
    log(name, "fails")
    raise KeyError(name)


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()
    order = []

    def step(name):
        order.append(name)
        if name == "bad":
            raise ValueError("bad step")

    for name in ("first", "bad", "third"):
        loop.call_soon(step, name)
    await asyncio.sleep(0)
    log("callbacks ran", order)

    def tick():
        log("tick")
        raise ZeroDivisionError("tick")

    loop.call_later(0.1, tick)
    loop.call_later(0.2, step, "after-tick")
    await asyncio.sleep(0.3)
    log("after timers", order)

    fut = loop.create_future()

    def on_done_bad(f):
        log("done callback 1 sees", f.result())
        raise TypeError("callback bug")

    def on_done_good(f):
        log("done callback 2 sees", f.result())

    fut.add_done_callback(on_done_bad)
    fut.add_done_callback(on_done_good)
    fut.set_result("ready")
    log("result set")
    await asyncio.sleep(0)
    await asyncio.sleep(0)

    loop.call_exception_handler({"message": "custom report", "exception": OSError("disk full")})
    loop.call_exception_handler({"message": "explode"})
    log("handler raised, loop goes on")
    loop.call_soon(step, "after-explode")
    await asyncio.sleep(0)
    log("order", order)

    restart()
    jobs = [asyncio.create_task(failing_job("orphan"))]
    ok = asyncio.create_task(asyncio.sleep(0.06, "fine"))
    log("ok result", await ok)
    await asyncio.sleep(0.2)
    log("orphan done", jobs[0].done(), "reports so far", len(reports))
    jobs.clear()


asyncio.run(main())
