# A dispatcher's three queues, used without waiting where it can: urgent
# jobs in a bounded PriorityQueue, where put_nowait raises QueueFull and
# the dispatcher sheds the least urgent entry (drain with get_nowait,
# drop the last, put the rest back) to admit a more urgent one; an undo
# log in a LifoQueue read newest first with get_nowait until
# QueueEmpty; a worker waiting in get() on a plain queue when the
# dispatcher put_nowaits (qsize stays 1 until the worker runs), whose
# task_done calls let join() return, and one task_done too many raises
# ValueError; a full bounded queue's waiting put() resumes when a
# get_nowait frees a slot.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    urgent = asyncio.PriorityQueue(maxsize=3)
    for job in [(3, "reindex"), (1, "page-oncall"), (2, "rotate-keys")]:
        urgent.put_nowait(job)

    def admit(job):
        try:
            urgent.put_nowait(job)
            return "admitted"
        except asyncio.QueueFull:
            entries = []
            while True:
                try:
                    entries.append(urgent.get_nowait())
                except asyncio.QueueEmpty:
                    break
            for _ in entries:
                urgent.task_done()
            entries.sort()
            if job < entries[-1]:
                shed = entries.pop()
                entries.append(job)
            else:
                shed = job
            for e in entries:
                urgent.put_nowait(e)
            return f"full, shed {shed[1]}"

    log("admit flush-cache:", admit((4, "flush-cache")))
    log("admit fail-over:", admit((0, "fail-over")))
    order = []
    while not urgent.empty():
        order.append(urgent.get_nowait()[1])
        urgent.task_done()
    log("urgent order", order)

    undo = asyncio.LifoQueue()
    for step in ("create", "rename", "move"):
        undo.put_nowait(step)
    undone = []
    try:
        while True:
            undone.append(undo.get_nowait())
    except asyncio.QueueEmpty:
        log("undone", undone, "empty", undo.empty())

    work = asyncio.Queue()

    async def worker():
        while True:
            item = await work.get()
            log("worker got", item, "qsize", work.qsize())
            await asyncio.sleep(0.05)
            work.task_done()

    w = asyncio.create_task(worker())
    await asyncio.sleep(0)
    work.put_nowait("a")
    log("after put_nowait qsize", work.qsize())
    work.put_nowait("b")
    await asyncio.sleep(0)
    log("next iteration qsize", work.qsize())
    await work.join()
    log("joined")
    try:
        work.task_done()
    except ValueError as e:
        log("extra task_done:", d(e))
    w.cancel()
    await asyncio.gather(w, return_exceptions=True)

    small = asyncio.Queue(maxsize=1)
    small.put_nowait("x")

    async def blocked_put():
        await small.put("y")
        log("blocked put resumed, qsize", small.qsize())

    p = asyncio.create_task(blocked_put())
    await asyncio.sleep(0.1)
    log("put waiting", not p.done(), "full", small.full())
    log("get_nowait", small.get_nowait(), "full", small.full())
    await p
    log("small holds", small.get_nowait())


asyncio.run(main())
