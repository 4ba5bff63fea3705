# A program that drives its own event loop with the low-level API, as
# pre-asyncio.run code and embedders do: run_until_complete on a task and
# on a future a timer completes, a task made before a run that outlives
# it, run_forever ended by a callback's stop() (callbacks queued after the
# stop wait for the next run), stop() before run_forever (one iteration),
# the errors of re-entering a running loop, a future of another loop, a
# run that stops before its future is done, closing a running loop, and
# what a closed loop refuses; a task still pending at close is reported.
import asyncio
import gc

loop = asyncio.new_event_loop()
T0 = loop.time()
reports = []


def say(*a):
    print(f"{loop.time() - T0:.1f}", *a)


def handler(lp, ctx):
    reports.append(ctx["message"])


async def job(name, delay, fail=False):
    await asyncio.sleep(delay)
    say(name, "done")
    if fail:
        raise ValueError(name)
    return name.upper()


def main():
    loop.set_exception_handler(handler)
    say("running", loop.is_running(), "closed", loop.is_closed())
    say("run ->", loop.run_until_complete(loop.create_task(job("first", 0.1))))

    fut = loop.create_future()
    loop.call_later(0.1, fut.set_result, "timer value")
    say("future ->", loop.run_until_complete(fut))

    bg = loop.create_task(job("background", 0.22))
    loop.run_until_complete(loop.create_task(job("short", 0.1)))
    say("bg done after a short run", bg.done())

    try:
        loop.run_until_complete(loop.create_task(job("failing", 0.07, fail=True)))
    except ValueError as e:
        say("run raised", repr(e), "running", loop.is_running())

    order = []

    def stopper():
        order.append("stop")
        loop.stop()
        loop.call_soon(order.append, "queued after stop")

    loop.call_later(0.2, stopper)
    loop.run_forever()
    say("run_forever returned", order, "bg done", bg.done(), "result", bg.result())

    loop.call_soon(order.append, "before one-shot")
    loop.stop()
    loop.run_forever()
    say("stopped before run_forever", order)

    async def reenter():
        other = loop.create_future()
        # (not run_forever: 3.13.0's raises the same error, but its cleanup
        # then marks the running loop as not running, CPython's bug
        # gh-130145, fixed later; Go's RunForever leaves the loop running)
        for call in (lambda: loop.run_until_complete(other), loop.close):
            try:
                call()
            except RuntimeError as e:
                say("inside:", e)
        other.cancel()
        say("running inside", loop.is_running())

    loop.run_until_complete(loop.create_task(reenter()))

    foreign_loop = asyncio.new_event_loop()
    foreign = foreign_loop.create_future()
    try:
        loop.run_until_complete(foreign)
    except ValueError as e:
        say("foreign future:", e)
    foreign_loop.close()

    slow = loop.create_task(job("slow", 0.3))
    loop.call_later(0.1, loop.stop)
    try:
        loop.run_until_complete(slow)
    except RuntimeError as e:
        say("early stop:", e, "slow done", slow.done())
    say("slow after a second run ->", loop.run_until_complete(slow))

    left = loop.create_task(job("left behind", 1))
    loop.run_until_complete(asyncio.sleep(0.1))
    loop.close()
    del left
    gc.collect()
    print("closed", loop.is_closed(), "running", loop.is_running(), "reports", reports)
    loop.close()
    for what, call in (("run_forever", loop.run_forever),
                       ("call_soon", lambda: loop.call_soon(print)),
                       ("run_until_complete", lambda: loop.run_until_complete(loop.create_future()))):
        try:
            call()
        except RuntimeError as e:
            print("closed loop", what, "->", e)


main()
