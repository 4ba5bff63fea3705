# Which awaits suspend: a ticker task bumps a counter every loop
# iteration, and main prints how many ticks each await let through. A
# connection pool's fast paths (a free Semaphore, a set Event, an
# uncontended Lock, a Condition whose predicate holds, a Queue with room or
# items, join() with nothing unfinished, a finished future, shield() of a
# finished task, wait_for() of one, an unexpired timeout()) take no
# iteration; gather() and wait() of finished tasks, as_completed() over
# them, a one-party Barrier and sleep(0) do.
import asyncio

from probe import log, restart

ticks = 0


async def ticker():
    global ticks
    while True:
        ticks += 1
        await asyncio.sleep(0)


async def main():
    restart()
    tk = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()

    async def measure(label, aw):
        before = ticks
        r = await aw
        log(label, "ticks", ticks - before)
        return r

    sem = asyncio.Semaphore(2)
    ev = asyncio.Event()
    ev.set()
    lock = asyncio.Lock()
    cond = asyncio.Condition()
    q = asyncio.Queue(maxsize=2)
    fut = loop.create_future()
    fut.set_result("ready")

    async def job():
        return "job"

    done = asyncio.create_task(job())
    await asyncio.sleep(0)

    await measure("sleep(0)", asyncio.sleep(0))
    await measure("semaphore acquire", sem.acquire())
    await measure("event wait", ev.wait())
    await measure("lock acquire", lock.acquire())
    lock.release()
    async def cond_ok():
        async with cond:
            return await cond.wait_for(lambda: True)
    await measure("condition wait_for", cond_ok())
    await measure("queue put", q.put(1))
    await measure("queue get", q.get())
    q.task_done()
    await measure("queue join", q.join())
    await measure("finished future", fut)
    await measure("finished task", done)
    await measure("shield of finished", asyncio.shield(done))
    await measure("wait_for finished", asyncio.wait_for(done, 1))
    async def in_timeout():
        async with asyncio.timeout(1):
            return 1
    await measure("timeout block", in_timeout())
    await measure("gather finished", asyncio.gather(done, fut))
    await measure("gather nothing", asyncio.gather())
    await measure("wait finished", asyncio.wait([done]))
    async def first_of():
        for c in asyncio.as_completed([done, fut]):
            await c
    await measure("as_completed finished", first_of())
    await measure("barrier of one", asyncio.Barrier(1).wait())
    await measure("to a sleeping task", asyncio.create_task(asyncio.sleep(0)))
    tk.cancel()
    log("sem locked", sem.locked(), "qsize", q.qsize())


asyncio.run(main())
