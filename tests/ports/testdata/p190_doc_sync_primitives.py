# asyncio-sync.rst: the Lock, Event, Condition, Semaphore and Barrier
# examples. Lock, Condition and Semaphore are snippets in the docs
# (`async with lock:` and the acquire/try/finally release form); here each
# guards a shared resource two tasks use. Event and Barrier are the docs'
# programs (sleep(1) scaled to 0.1; the Barrier's repr without its
# address).
import asyncio
import re

from probe import log, restart


def r(obj):
    return re.sub(r" object at 0x[0-9a-f]+", "", repr(obj))


async def waiter(event):
    log('waiting for it ...')
    await event.wait()
    log('... got it!')


async def event_main():
    # Create an Event object.
    event = asyncio.Event()

    # Spawn a Task to wait until 'event' is set.
    waiter_task = asyncio.create_task(waiter(event))

    # Sleep for 1 second and set the event.
    await asyncio.sleep(0.1)
    event.set()

    # Wait until the waiter task is finished.
    await waiter_task


async def example_barrier():
    # barrier with 3 parties
    b = asyncio.Barrier(3)

    # create 2 new waiting tasks
    asyncio.create_task(b.wait())
    asyncio.create_task(b.wait())

    await asyncio.sleep(0)
    log(r(b))

    # The third .wait() call passes the barrier
    await b.wait()
    log(r(b))
    log("barrier passed")

    await asyncio.sleep(0)
    log(r(b))


async def main():
    restart()
    lock = asyncio.Lock()

    async def use_lock(name):
        # ... later
        async with lock:
            # access shared state
            log(name, "has the lock", r(lock))
            await asyncio.sleep(0.1)

    async def use_lock_by_hand(name):
        # ... later
        await lock.acquire()
        try:
            # access shared state
            log(name, "has the lock by hand", r(lock))
            await asyncio.sleep(0.1)
        finally:
            lock.release()

    await asyncio.gather(use_lock("a"), use_lock_by_hand("b"), use_lock("c"))
    log("unlocked", r(lock))

    restart()
    await event_main()

    restart()
    cond = asyncio.Condition()
    items = []

    async def consumer(name):
        # ... later
        async with cond:
            await cond.wait_for(lambda: items)
            log(name, "took", items.pop(0))

    async def producer():
        for i in range(2):
            await asyncio.sleep(0.1)
            async with cond:
                items.append(i)
                log("produced", i)
                cond.notify()

    await asyncio.gather(consumer("c1"), consumer("c2"), producer())

    restart()
    sem = asyncio.Semaphore(2)

    async def use_sem(name, hold):
        # ... later
        async with sem:
            # work with shared resource
            log(name, "in", r(sem))
            await asyncio.sleep(hold)
        log(name, "out")

    await asyncio.gather(use_sem("s1", 0.1), use_sem("s2", 0.2), use_sem("s3", 0.1))
    log(r(sem))

    restart()
    await example_barrier()

asyncio.run(main())
