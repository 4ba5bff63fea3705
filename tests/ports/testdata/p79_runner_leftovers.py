# Background work that outlives its run in an asyncio.Runner: tasks made
# in one run() keep going in the next ones, a call_later timer set in one
# run fires in a later one, a run whose coroutine raises leaves the loop
# usable, and close() cancels what is left: a task whose cleanup takes
# time is waited for (the clock moves during close), one whose cleanup
# ignores the cancellation finishes normally, and one whose cleanup fails
# is reported to the loop's exception handler.
import asyncio

from probe import d, log, restart

handled = []
closing = []


def handler(loop, context):
    handled.append(f"{context['message']}: {d(context.get('exception'))}")


async def bg(name, period):
    n = 0
    try:
        while True:
            await asyncio.sleep(period)
            n += 1
    except asyncio.CancelledError:
        # close() cancels the tasks in the order of a set: noted, printed sorted
        closing.append(f"{name} cancelled after {n} beats")
        if name == "slow":
            await asyncio.sleep(0.07)
            log(name, "cleanup done")
            raise
        if name == "stubborn":
            asyncio.current_task().uncancel()
            return n
        if name == "faulty":
            raise RuntimeError("cleanup failed")
        raise


async def start():
    restart()
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    for name, period in [("steady", 0.1), ("slow", 0.13), ("stubborn", 0.15), ("faulty", 0.23)]:
        asyncio.create_task(bg(name, period), name=name)
    loop.call_later(0.27, lambda: log("timer fired, tasks", len(asyncio.all_tasks(loop))))
    await asyncio.sleep(0.04)
    log("start returns, tasks", len(asyncio.all_tasks()))


async def idle(d):
    await asyncio.sleep(d)
    log("idle", d, "done")


async def fail():
    await asyncio.sleep(0.01)
    raise ValueError("bad request")


def main():
    runner = asyncio.Runner()
    runner.run(start())
    runner.run(idle(0.2))
    try:
        runner.run(fail())
    except ValueError as e:
        print("run raised", d(e))
    runner.run(idle(0.08))
    loop = runner.get_loop()
    print("before close, tasks", len(asyncio.all_tasks(loop)), "closed", loop.is_closed())
    runner.close()
    print("closed", loop.is_closed(), "handled", handled)
    print("closing", sorted(closing))


main()
