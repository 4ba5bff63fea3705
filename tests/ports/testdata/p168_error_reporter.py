# A service routes the loop's error reports: its exception handler keeps
# a tally, drops reports tagged "ignore:" and hands the rest on to
# loop.default_exception_handler, whose records the service's logging
# handler captures (level, first line, whether an exception came with
# it). User code reports with call_exception_handler; a callback, a done
# callback and a timer raise; a task's failure read through exception()
# in a done callback is not reported; restoring the default handler with
# set_exception_handler(None) sends reports straight to the logger; a
# fire-and-forget task that fails is reported when its last reference
# goes at the end of main (Go: at the loop's close, right after main
# returns -- docs/rules.md FUT-10).
import asyncio
import logging

from probe import d, log, restart

logged = []


class Capture(logging.Handler):
    def emit(self, record):
        first = record.getMessage().split("\n")[0]
        for prefix in ("Exception in callback", "Task exception was never retrieved"):
            if first.startswith(prefix):
                first = prefix
        logged.append(f"{record.levelname}: {first} {'exc' if record.exc_info else '-'}")


logger = logging.getLogger("asyncio")
logger.addHandler(Capture())
logger.propagate = False

tally = {}


def handler(loop, ctx):
    msg = ctx["message"]
    for prefix in ("Exception in callback", "Task exception was never retrieved"):
        if msg.startswith(prefix):
            msg = prefix
    tally[msg] = tally.get(msg, 0) + 1
    if msg.startswith("ignore:"):
        log("handler: dropped", msg)
        return
    log("handler:", msg, d(ctx.get("exception")), "-> default")
    loop.default_exception_handler(ctx)


async def fails(name, after):
    await asyncio.sleep(after)
    raise KeyError(name)


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()

    def flaky(n):
        if n % 2:
            raise ValueError(f"flaky {n}")
        log("flaky", n, "ok")

    for n in range(3):
        loop.call_soon(flaky, n)
    await asyncio.sleep(0.1)
    log("logged", len(logged))

    loop.call_exception_handler({"message": "ignore: cache miss storm"})
    loop.call_exception_handler({"message": "disk almost full", "exception": OSError(28, "No space left")})
    loop.call_exception_handler({"message": "ignore: slow peer", "exception": TimeoutError()})
    log("after reports, logged", len(logged))

    def timer():
        log("timer fires")
        raise RuntimeError("timer bug")

    loop.call_later(0.12, timer)
    await asyncio.sleep(0.2)

    read = asyncio.create_task(fails("read", 0.07))
    read.add_done_callback(lambda t: log("watcher read", d(t.exception())))
    fut = loop.create_future()

    def on_done(f):
        log("on_done sees", f.result())
        raise TypeError("bad listener")

    fut.add_done_callback(on_done)
    loop.call_later(0.1, fut.set_result, "payload")
    await asyncio.sleep(0.3)
    log("tally", sorted(tally.items()))

    loop.set_exception_handler(None)
    loop.call_soon(flaky, 5)
    await asyncio.sleep(0.1)
    log("default handler logged directly, tally unchanged", sum(tally.values()))
    loop.set_exception_handler(handler)

    orphan = asyncio.create_task(fails("orphan", 0.1))
    await asyncio.sleep(0.2)
    log("orphan done", orphan.done(), "logged", len(logged))
    del orphan


asyncio.run(main())
print("logged:")
for line in logged:
    print(" ", line)
print("tally", sorted(tally.items()))
