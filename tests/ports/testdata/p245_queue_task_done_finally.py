# "asyncio.Queue.join() 卡住 / task_done() 必须在 finally 中调用",
# https://php.sqjnqi.com/faq/2034327.html
# The page's point: join() waits for one task_done() per put item, not
# for the queue to be empty; a consumer that fails on an item before
# task_done() leaves join() hanging even though every item was taken.
# Its fix: task_done() in a finally. Adapted: items 0..4, item 2 fails
# processing, the hang shown with wait_for(q.join(), 0.7) while qsize()
# is already 0; then the finally version.
import asyncio

from probe import d, log, restart


async def process(item):
    await asyncio.sleep(0.1)
    if item == 2:
        raise ValueError(f"bad item {item}")
    return item * 10


async def consumer_no_finally(q, done):
    while True:
        item = await q.get()
        try:
            done.append(await process(item))
        except ValueError as e:
            log("consumer error", d(e))
            continue  # task_done() is skipped for this item
        q.task_done()


async def consumer_finally(q, done):
    while True:
        item = await q.get()
        try:
            done.append(await process(item))
        except ValueError as e:
            log("consumer error", d(e))
        finally:
            q.task_done()


async def run(consumer):
    q = asyncio.Queue()
    done = []
    for i in range(5):
        q.put_nowait(i)
    c = asyncio.create_task(consumer(q, done))
    try:
        await asyncio.wait_for(q.join(), timeout=0.7)
        log("join returned; qsize", q.qsize(), "done", done)
    except TimeoutError:
        log("join timed out; qsize", q.qsize(), "empty", q.empty(), "done", done)
    c.cancel()
    try:
        await c
    except asyncio.CancelledError:
        log("consumer cancelled")


async def main():
    restart()
    await run(consumer_no_finally)
    restart()
    await run(consumer_finally)


asyncio.run(main())
