# The eager task factory across the API: a task's eager step runs in its
# own copy of the creator's context (what it sets does not leak back); an
# eager task that creates another one, which finishes at once, is the
# current task again afterwards; a task that raises in its eager step is
# done (failed) when create_task returns and cancel() on it is False; an
# eager step takes a free Lock at once and queues on a held one;
# gather() and as_completed() wrap coroutines in tasks through the
# factory, so they start eagerly inside the call; a TaskGroup's children
# start eagerly too. (3.13.0 names a factory-made task only after its eager
# step, so the program does not print names there.)
import asyncio
import contextvars

from probe import d, log, restart

who = contextvars.ContextVar("who", default="main")
main_task = None


async def leaf(name):
    log(name, "runs in its own task", asyncio.current_task() is not main_task, "who", who.get())
    return name


async def outer():
    who.set("outer")
    me = asyncio.current_task()
    t = asyncio.create_task(leaf("inner"), name="inner")
    log("outer after creating inner: done", t.done(), "current is outer", asyncio.current_task() is me)
    await asyncio.sleep(0.1)
    return t.result()


async def boom():
    log("boom raising in its eager step")
    raise KeyError("k")


async def locker(name, lock, hold):
    log(name, "wants the lock, locked", lock.locked())
    async with lock:
        log(name, "has the lock")
        await asyncio.sleep(hold)
    log(name, "released")


async def step(name, delay):
    log(name, "starts")
    await asyncio.sleep(delay)
    log(name, "ends")
    return name


async def main():
    global main_task
    main_task = asyncio.current_task()
    restart()
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    o = asyncio.create_task(outer(), name="outer")
    log("main sees who", who.get(), "outer done", o.done())
    log("outer result", await o)

    b = asyncio.create_task(boom(), name="boom")
    log("boom done", b.done(), "cancel ->", b.cancel(), "exception", d(b.exception()))

    lock = asyncio.Lock()
    l1 = asyncio.create_task(locker("l1", lock, 0.2))
    l2 = asyncio.create_task(locker("l2", lock, 0.1))
    log("after creating lockers: locked", lock.locked(), "l1 done", l1.done())
    await asyncio.gather(l1, l2)

    restart()
    g = asyncio.gather(step("g1", 0.2), step("g2", 0.1))
    log("gather returned")
    log("gather result", await g)

    restart()
    it = asyncio.as_completed([step("c1", 0.3), step("c2", 0.1)])
    log("as_completed returned")
    for c in it:
        log("next", await c)

    restart()
    async with asyncio.TaskGroup() as tg:
        t1 = tg.create_task(step("tg1", 0.1))
        log("tg1 created, done", t1.done())
        t2 = tg.create_task(leaf("tg2"))
        log("tg2 created, done", t2.done())
    log("group done", t1.result(), t2.result())


asyncio.run(main())
