# Task bookkeeping in a job runner: done callbacks run in the order they
# were added, in a later iteration (never inside cancel() or the task's
# return), with current_task() None; a removed callback does not run and
# removing it again finds nothing; a callback added to a task already done
# is scheduled at once; names given at create_task and set_name; the
# number of pending tasks (all_tasks) as jobs start and finish;
# current_task() inside each job is the job's own task.
import asyncio

from probe import log, restart


async def job(name, delay, fail=False):
    me = asyncio.current_task()
    log(name, "running as", me.get_name())
    await asyncio.sleep(delay)
    if fail:
        raise ValueError(name)
    return name.upper()


async def main():
    restart()
    main_task = asyncio.current_task()
    main_task.set_name("runner")
    seen = []

    def on_done(tag):
        def cb(t):
            state = "cancelled" if t.cancelled() else (
                f"failed {t.exception()!r}" if t.exception() else f"ok {t.result()}")
            seen.append(f"{tag}:{t.get_name()}:{state}:current={asyncio.current_task()}")
        return cb

    log("tasks at start", len(asyncio.all_tasks()))
    a = asyncio.create_task(job("alpha", 0.1), name="job-alpha")
    b = asyncio.create_task(job("beta", 0.2, fail=True), name="job-beta")
    c = asyncio.create_task(job("gamma", 0.3), name="job-gamma")
    log("tasks after create", len(asyncio.all_tasks()))
    first, second, third = on_done("first"), on_done("second"), on_done("third")
    a.add_done_callback(first)
    a.add_done_callback(second)
    a.add_done_callback(third)
    log("removed", a.remove_done_callback(second))
    log("removed again", a.remove_done_callback(second))
    b.add_done_callback(on_done("b"))
    c.add_done_callback(on_done("c"))
    c.set_name("job-gamma-renamed")
    await asyncio.sleep(0.13)
    log("alpha done", a.done(), "seen", seen)
    log("tasks now", len(asyncio.all_tasks()), sorted(t.get_name() for t in asyncio.all_tasks()))
    a.add_done_callback(on_done("late"))
    log("late callback not yet run", len(seen))
    await asyncio.sleep(0)
    log("after a yield", seen[-1])
    log("removed from done task", a.remove_done_callback(first))
    await asyncio.sleep(0.1)
    c.cancel()
    log("cancel requested, seen", len(seen), "c done", c.done())
    await asyncio.sleep(0)
    log("c done", c.done(), "seen", len(seen))
    await asyncio.sleep(0)
    for s in seen:
        log(s)
    log("tasks at end", len(asyncio.all_tasks()), "beta exception", repr(b.exception()))


asyncio.run(main())
