# A cache in front of a slow backend, with the eager task factory: a task
# whose coroutine finishes without suspending (a cache hit) runs inside
# create_task, is done when create_task returns and never shows in
# all_tasks(); a miss runs eagerly up to its first await and then goes on
# as an ordinary task, with current_task() the task itself during the
# eager step (its name is printed only after the first await: 3.13.0's
# create_task names a factory-made task after the eager step). Tasks an eager task creates are eager too. Last, the same
# loop without the factory: every task waits for the next iteration.
import asyncio

from probe import log, restart

cache = {"a": 1, "b": 2}


async def fetch(key, delay):
    me = asyncio.current_task()
    log("fetch", key, "starts, current task set:", me is not None)
    if key in cache:
        return cache[key]
    await asyncio.sleep(delay)
    cache[key] = len(key) * 10
    log("fetch", key, "loaded in", me.get_name())
    return cache[key]


async def prefetch(keys):
    log("prefetch starts")
    tasks = [asyncio.create_task(fetch(k, 0.1 * (i + 1)), name=f"pre-{k}")
             for i, k in enumerate(keys)]
    log("prefetch created", [t.done() for t in tasks])
    return sum(await asyncio.gather(*tasks))


async def main():
    restart()
    loop = asyncio.get_running_loop()
    loop.set_task_factory(asyncio.eager_task_factory)
    hit = asyncio.create_task(fetch("a", 0.1), name="hit")
    log("hit done", hit.done(), "result", hit.result())
    miss = asyncio.create_task(fetch("ccc", 0.1), name="miss")
    log("miss done", miss.done(), "tasks", len(asyncio.all_tasks()))
    log("miss result", await miss)
    total = await asyncio.create_task(prefetch(["b", "dd", "a", "eeee"]), name="prefetch")
    log("prefetch total", total, "tasks", len(asyncio.all_tasks()))

    restart()
    loop.set_task_factory(None)
    lazy = asyncio.create_task(fetch("a", 0.1), name="lazy")
    log("lazy done", lazy.done(), "tasks", len(asyncio.all_tasks()))
    await asyncio.sleep(0)
    log("lazy done after a yield", lazy.done())
    total = await asyncio.create_task(prefetch(["b", "ff"]), name="prefetch2")
    log("prefetch2 total", total)


asyncio.run(main())
