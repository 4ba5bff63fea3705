# A TaskGroup where one task raises, caught with except* ValueError, from
# "Task Group Trouble: Exception Handling in Python Asyncio (3.11+)",
# https://runebook.dev/en/docs/python/library/asyncio-task/task-groups
# Adapted: times in tenths, and C's shorter than B's (A 0.3, B 0.1, C
# 0.07 s) so that one sibling is left to cancel when B fails (a
# TaskGroup cancels its children in the order of a set, which a program
# cannot rely on), log() instead of print, the cancelled sibling logs its
# cancellation, and a second run
# where B and C both fail after one sleep(0) (ValueError and KeyError, in
# the same loop iteration, before the group hears of either) shows
# except* splitting the group: both clauses run.
import asyncio

from probe import d, log, restart


async def worker(name, delay, fail=None):
    log(f"Task {name} started. Will sleep for {delay} seconds.")
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        log(f"Task {name} cancelled")
        raise
    if fail is not None:
        raise fail(f"{name} encountered an error!")
    log(f"Task {name} finished.")
    return f"Result from {name}"


async def main_task_group(failures, delays=(0.3, 0.1, 0.07)):
    log("Starting TaskGroup example...", sorted(failures))
    try:
        async with asyncio.TaskGroup() as tg:
            task_a = tg.create_task(worker("Task A", delays[0], failures.get("A")))
            task_b = tg.create_task(worker("Task B", delays[1], failures.get("B")))
            task_c = tg.create_task(worker("Task C", delays[2], failures.get("C")))
        log(f"Task A result: {task_a.result()}")
        log(f"Task C result: {task_c.result()}")
    except* ValueError as eg:
        log("Caught an ExceptionGroup with ValueErrors:", d(eg))
        for exc in eg.exceptions:
            log(f"- {exc}")
    except* KeyError as eg:
        log("Caught KeyErrors:", d(eg))
    log("TaskGroup example finished.", "A cancelled", task_a.cancelled(), "C cancelled", task_c.cancelled())


async def main():
    restart()
    await main_task_group({"B": ValueError})
    restart()
    await main_task_group({"B": ValueError, "C": KeyError}, (0.3, 0, 0))
    restart()
    await main_task_group({})


asyncio.run(main())
