# Response futures with listeners. Done callbacks run in registration
# order, each through call_soon once the future completes: after what
# was queued before, and after the code that completed it. One removed
# before completion does not run (remove_done_callback counts it once,
# then 0); one added after completion is scheduled at once; a task
# awaiting the future is woken in its place among the callbacks; a
# listener that raises goes to the exception handler and the rest still
# run. A cancelled future runs its callbacks too, and removing one after
# completion no longer stops it; a task's callback runs before the
# awaiting task resumes.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    loop = asyncio.get_running_loop()
    order = []

    def handler(loop, ctx):
        order.append("handler")
        log("handler:", ctx["message"].startswith("Exception in callback"), d(ctx["exception"]))

    loop.set_exception_handler(handler)

    def cb(name):
        def f(f_):
            order.append(f"{name}:{'cancelled' if f_.cancelled() else f_.result()}")
        return f

    fut = loop.create_future()
    first, second, third = cb("first"), cb("second"), cb("third")
    fut.add_done_callback(first)
    fut.add_done_callback(second)
    fut.add_done_callback(third)
    log("removed second", fut.remove_done_callback(second))
    log("removed again", fut.remove_done_callback(second))

    async def waiter(name):
        r = await fut
        order.append(f"{name} woke with {r}")

    w1 = asyncio.create_task(waiter("w1"))
    await asyncio.sleep(0)

    def boom(f_):
        order.append("boom")
        raise ValueError("listener broke")

    fut.add_done_callback(boom)
    fut.add_done_callback(cb("fourth"))
    loop.call_soon(order.append, "queued before result")
    fut.set_result("r1")
    order.append("after set_result")
    fut.add_done_callback(cb("late"))
    loop.call_soon(order.append, "queued after result")
    await w1
    log("order", order)

    restart()
    order.clear()
    fut2 = loop.create_future()
    fut2.add_done_callback(cb("c1"))
    c2 = cb("c2")
    fut2.add_done_callback(c2)
    fut2.cancel("nope")
    log("remove after cancel", fut2.remove_done_callback(c2))
    await asyncio.sleep(0)
    log("order", order)

    order.clear()

    async def job():
        await asyncio.sleep(0.1)
        return "job-result"

    t = asyncio.create_task(job(), name="job")
    t.add_done_callback(lambda t_: order.append(f"{t_.get_name()} done {t_.result()}"))
    await t
    order.append("main resumed")
    await asyncio.sleep(0)
    log("order", order)


asyncio.run(main())
