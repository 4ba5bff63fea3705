# A batch job under a deadline: asyncio.timeout() around a TaskGroup.
# Each worker keeps its own timeout and pushes it back with reschedule()
# after every step that makes progress. When the batch deadline passes,
# the group aborts its children: a worker passes the CancelledError on, a
# stubborn uploader catches it, calls uncancel() and finishes its upload
# (the group waits for it), and the body's cancellation comes out of the
# timeout as TimeoutError. Then a worker whose own timeout expires fails
# its group (its sibling is cancelled); then a job cancelled from outside
# while its group runs catches the CancelledError its group re-raises,
# uncancels and returns a partial result. (A group cancels its children
# in the order of a set, so the uploader backs off 10 ms before it logs:
# the trace does not depend on that order.)
import asyncio

from probe import d, log, rel, restart


async def worker(name, steps, step, budget):
    me = asyncio.current_task()
    done = 0
    try:
        async with asyncio.timeout(budget) as cm:
            for _ in range(steps):
                await asyncio.sleep(step)
                done += 1
                cm.reschedule(asyncio.get_running_loop().time() + budget)
        log(name, "finished", done)
    except TimeoutError:
        log(name, "own timeout after", done, "steps, cancelling", me.cancelling())
        raise
    except asyncio.CancelledError as e:
        log(name, "cancelled after", done, "steps:", d(e), "cancelling", me.cancelling())
        raise
    return done


async def uploader(name, chunks):
    me = asyncio.current_task()
    sent = 0
    while sent < chunks:
        try:
            await asyncio.sleep(0.13)
            sent += 1
        except asyncio.CancelledError:
            n = me.uncancel()
            await asyncio.sleep(0.01)
            log(name, "ignores cancel at chunk", sent, "uncancel ->", n)
    log(name, "uploaded", sent, "cancelling", me.cancelling())
    return sent


async def job():
    me = asyncio.current_task()
    try:
        async with asyncio.TaskGroup() as tg:
            up = tg.create_task(uploader("up2", 3))
            tg.create_task(worker("w-bg", 9, 0.11, 0.3))
    except asyncio.CancelledError as e:
        log("job's group re-raised", d(e), "cancelling", me.cancelling())
        log("job uncancel ->", me.uncancel(), "upload result", up.result())
        return "partial"
    return "complete"


async def main():
    restart()
    me = asyncio.current_task()
    try:
        async with asyncio.timeout(0.5) as outer:
            async with asyncio.TaskGroup() as tg:
                a = tg.create_task(worker("w-fast", 3, 0.1, 0.15))
                b = tg.create_task(worker("w-slow", 10, 0.12, 0.2))
                u = tg.create_task(uploader("up", 5))
                log("body waits, deadline", rel(outer.when()))
    except TimeoutError:
        log("batch timed out, expired", outer.expired(), "cancelling", me.cancelling())
    log("a", a.result(), "b cancelled", b.cancelled(), "u", u.result())

    restart()
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(worker("w-stuck", 3, 0.3, 0.2))
            other = tg.create_task(worker("w-other", 5, 0.09, 0.2))
    except* TimeoutError as eg:
        log("group failed", d(eg), "other cancelled", other.cancelled(), "cancelling", me.cancelling())

    restart()
    j = asyncio.create_task(job())
    await asyncio.sleep(0.2)
    j.cancel("stop now")
    r = await j
    log("job returned", r, "cancelled", j.cancelled(), "cancelling", j.cancelling())


asyncio.run(main())
