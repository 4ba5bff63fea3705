# Workers on an asyncio.PriorityQueue of (priority, task) tuples, from
# "Asynchronous Task Ordering: Why You Need lt for PriorityQueue",
# https://runebook.dev/en/docs/python/library/asyncio-queue/asyncio.PriorityQueue
# (workers loop on get()/task_done(); main puts with put_nowait, joins the
# queue, then cancels the workers), and the page's pitfall: items whose
# priorities tie are compared on the second element, so a dict there is a
# TypeError. Adapted: log() instead of print, two workers taking 0.2 and
# 0.31 s, a second batch put while the workers are busy.
import asyncio

from probe import d, log, restart


async def worker(name, queue, work):
    """Coroutines that process items from the queue."""
    while True:
        priority, task = await queue.get()
        log(f"Worker {name} is processing task: '{task}' with priority {priority}")
        await asyncio.sleep(work)  # Simulate some work
        queue.task_done()


async def main():
    restart()
    queue = asyncio.PriorityQueue()
    log("Putting tasks into the queue...")
    queue.put_nowait((10, "Low Priority Task"))
    queue.put_nowait((1, "High Priority Task"))
    queue.put_nowait((5, "Medium Priority Task"))
    queue.put_nowait((1, "Another High Priority Task"))
    workers = [
        asyncio.create_task(worker("A", queue, 0.2)),
        asyncio.create_task(worker("B", queue, 0.31)),
    ]
    await asyncio.sleep(0.26)
    log("second batch, qsize", queue.qsize())
    queue.put_nowait((3, "Urgent Report"))
    queue.put_nowait((0, "Critical Fix"))
    await queue.join()
    log("All tasks processed, qsize", queue.qsize())
    for w in workers:
        w.cancel()
    results = await asyncio.gather(*workers, return_exceptions=True)
    log("workers", [d(r) for r in results])

    # the pitfall: a tie on priority compares the second elements
    queue.put_nowait((2, {"job": "a"}))
    try:
        queue.put_nowait((2, {"job": "b"}))
    except TypeError as e:
        log("TypeError:", e)
    log("qsize after the failed put", queue.qsize())


asyncio.run(main())
