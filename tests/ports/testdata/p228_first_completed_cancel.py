# asyncio.wait(return_when=FIRST_COMPLETED) and cancelling what is still
# pending, from "Beyond FIRST_COMPLETED: asyncio.as_completed and Timeout
# Patterns", https://runebook.dev/en/docs/python/library/asyncio-task/asyncio.FIRST_COMPLETED
# Adapted: times in tenths of the original (A 0.3, B 0.1, C 0.2 s),
# log() instead of print, the pending set walked in creation order (a
# set's order is not the program's), and the commented-out "wait for
# them to fully cancel" done, with a worker that logs its cancellation.
import asyncio

from probe import d, log, restart


async def worker(name, delay):
    log(f"Task {name}: Starting...")
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        log(f"Task {name}: cancelled while sleeping")
        raise
    log(f"Task {name}: Finished!")
    return f"Result from {name}"


async def main():
    restart()
    task1 = asyncio.create_task(worker("A", 0.3))
    task2 = asyncio.create_task(worker("B", 0.1))
    task3 = asyncio.create_task(worker("C", 0.2))
    tasks = [task1, task2, task3]

    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)

    first_result = done.pop().result()
    log(f"First task completed with result: {first_result}")
    log("pending", len(pending))

    for task in tasks:
        if task in pending:
            task.cancel()
    for task in tasks:
        if task in pending:
            try:
                await task
            except asyncio.CancelledError as e:
                log("awaited a cancelled task:", d(e), task.cancelled())
    log("states", [t.cancelled() for t in tasks])


asyncio.run(main())
