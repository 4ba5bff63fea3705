# A two-stage pipeline: a producer feeds a bounded queue of raw records,
# two parsers move them to a bounded queue of parsed ones, a writer drains
# that. The producer shuts the first queue down gracefully: the parsers
# still get what is queued and stop on QueueShutDown once it is empty. The
# writer is slow, so main shuts the second queue down immediately: the
# queued items are dropped (each counted as done), a parser blocked in put
# gets QueueShutDown, join() still waits for the item the writer holds,
# and a task_done() too many raises ValueError.
import asyncio

from probe import log, restart


async def producer(raw):
    for i in range(6):
        await raw.put(f"r{i}")
        log("produced", f"r{i}", "qsize", raw.qsize())
        await asyncio.sleep(0.06)
    raw.shutdown()
    log("producer shut raw down, qsize", raw.qsize())
    try:
        await raw.put("late")
    except asyncio.QueueShutDown:
        log("late put refused")


async def parser(name, raw, parsed):
    n = 0
    while True:
        try:
            rec = await raw.get()
        except asyncio.QueueShutDown:
            log(name, "raw shut down after", n)
            return n
        try:
            await asyncio.sleep(0.13)
            await parsed.put(rec.upper())
            log(name, "passed", rec, "parsed qsize", parsed.qsize())
        except asyncio.QueueShutDown:
            log(name, "parsed shut down holding", rec)
            raw.task_done()
            return n
        n += 1
        raw.task_done()


async def writer(parsed, out):
    while True:
        try:
            item = await parsed.get()
        except asyncio.QueueShutDown:
            log("writer stops, qsize", parsed.qsize())
            return
        log("writer got", item)
        try:
            await asyncio.sleep(0.35)
            out.append(item)
        finally:
            parsed.task_done()


async def main():
    restart()
    raw = asyncio.Queue(maxsize=2)
    parsed = asyncio.Queue(maxsize=2)
    out = []
    w = asyncio.create_task(writer(parsed, out))
    ps = [asyncio.create_task(parser(f"p{i}", raw, parsed)) for i in range(2)]
    prod = asyncio.create_task(producer(raw))
    await prod
    await asyncio.sleep(0.33)
    log("shutting parsed down: qsize", parsed.qsize(), "full", parsed.full())
    parsed.shutdown(immediate=True)
    log("after immediate shutdown qsize", parsed.qsize(), "empty", parsed.empty())
    try:
        parsed.get_nowait()
    except asyncio.QueueShutDown:
        log("get_nowait refused")
    j = asyncio.create_task(parsed.join())
    await asyncio.sleep(0)
    log("join done", j.done())
    counts = await asyncio.gather(*ps)
    log("parsers", counts)
    await w
    await j
    log("join returned, out", out)
    try:
        parsed.task_done()
    except ValueError as e:
        log("extra task_done:", e)
    await raw.join()
    log("raw joined, qsize", raw.qsize())


asyncio.run(main())
