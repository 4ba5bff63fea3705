# A service run in an asyncio.Runner, with a contextvars context of its
# own: runner.run(setup(), context=ctx) sets the service's variables in
# ctx and the next runs with context=ctx see them, while a run with no
# context uses the runner's own context; the loop and its clock carry on
# from run to run. The service accepts requests while call_later
# heartbeats tick; a call_later "signal" sets a stop Event; shutdown
# drains the in-flight requests with Condition.wait_for under a timeout
# (cancelling the ones left when it expires), then commits under shield()
# -- a second "signal" cancels the service during the commit, which
# finishes anyway and is awaited before the cancellation goes on. A last
# run reports; close() cancels what is left.
import asyncio
import contextvars

from probe import d, log, restart

service = contextvars.ContextVar("service", default="-")
request_id = contextvars.ContextVar("request_id", default="none")


async def setup():
    restart()
    service.set("billing")
    log("setup sets service", service.get())


async def peek(label, new=None):
    log(label, "sees service", service.get(), "request_id", request_id.get())
    if new is not None:
        service.set(new)


async def handle(cond, state, rid, cost):
    request_id.set(rid)
    async with cond:
        state["inflight"] += 1
    try:
        await asyncio.sleep(cost)
        log(service.get(), "handled", request_id.get())
    except asyncio.CancelledError:
        log(service.get(), "abandoned", request_id.get())
        raise
    finally:
        async with cond:
            state["inflight"] -= 1
            cond.notify_all()


async def commit(state):
    log("commit starts")
    await asyncio.sleep(0.2)
    state["committed"] = True
    log("commit done")


async def serve():
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    stop = asyncio.Event()
    cond = asyncio.Condition()
    state = {"inflight": 0, "committed": False}
    beats = []

    def beat(n):
        beats.append(n)
        if not stop.is_set():
            loop.call_later(0.15, beat, n + 1)

    loop.call_later(0.15, beat, 1)
    loop.call_later(0.42, stop.set)
    tasks = []

    async def accept():
        try:
            for i, cost in enumerate([0.33, 0.52, 0.11, 0.74, 0.2]):
                tasks.append(asyncio.create_task(handle(cond, state, f"req{i}", cost)))
                await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            log("acceptor stopped after", len(tasks), "requests")
            raise

    acceptor = asyncio.create_task(accept())
    await stop.wait()
    log("stop requested, inflight", state["inflight"], "beats", beats)
    acceptor.cancel()
    try:
        async with asyncio.timeout(0.3):
            async with cond:
                await cond.wait_for(lambda: state["inflight"] == 0)
            log("drained")
    except TimeoutError:
        log("drain timed out, inflight", state["inflight"])
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    log("inflight", state["inflight"], "cancelled", [t.cancelled() for t in tasks])
    loop.call_later(0.1, me.cancel, "second signal")
    c = asyncio.create_task(commit(state))
    try:
        await asyncio.shield(c)
    except asyncio.CancelledError as e:
        log("serve got", d(e), "commit done", c.done())
        await c
        log("committed", state["committed"], "cancelling", me.cancelling())
        raise
    return "clean"


def main():
    ctx = contextvars.copy_context()
    with asyncio.Runner() as runner:
        runner.run(setup(), context=ctx)
        runner.run(peek("run without context", new="other"))
        runner.run(peek("run in ctx"), context=ctx)
        try:
            runner.run(serve(), context=ctx)
        except asyncio.CancelledError as e:
            print("serve raised", d(e))
        runner.run(peek("last run"))
        loop = runner.get_loop()
        log_tasks = asyncio.all_tasks(loop)
        print("tasks left", len(log_tasks), "service in ctx", ctx[service])


main()
