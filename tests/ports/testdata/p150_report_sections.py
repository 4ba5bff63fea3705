# A report builder: an outer TaskGroup runs sections, each running its
# queries in a TaskGroup under asyncio.timeout(); a sibling query runs in
# the outer group. A failing query makes its group raise an
# ExceptionGroup that passes the timeout unchanged and nests in the outer
# one; an expired budget is a TimeoutError in the outer group; a sibling
# failing first cancels the sections, whose timeouts never expired; a
# query whose cleanup raises when the budget expires turns the timeout
# into the inner group's ExceptionGroup. A section logs what leaves its
# timeout and flushes its metrics (an await) before re-raising: where
# the inner group saw its task cancelled from outside (the timeout) it
# cancels the task again as it raises (3.13), so that flush is
# interrupted and the section ends cancelled, which the outer group
# does not count as an error.
import asyncio

from probe import d, log, restart


cancelled = []


async def query(name, delay, fail=None, cleanup_fail=False):
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        cancelled.append(name)
        if cleanup_fail:
            raise RuntimeError(f"{name} cleanup failed")
        raise
    if fail:
        raise fail
    log(name, "ok")
    return name


async def section(name, budget, queries):
    try:
        async with asyncio.timeout(budget) as cm:
            async with asyncio.TaskGroup() as tg:
                for q in queries:
                    tg.create_task(query(*q))
    except BaseException as e:
        log(name, "leaves with", d(e), "expired", cm.expired())
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError as c:
            log(name, "metrics flush cancelled", d(c))
            raise
        raise
    log(name, "done")


async def report(label, sections, sibling=None):
    restart()
    cancelled.clear()
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(section(*s)) for s in sections]
            if sibling:
                tg.create_task(query(*sibling))
        log(label, "finished, sections cancelled", [t.cancelled() for t in tasks])
    except BaseException as e:
        log(label, "->", d(e))
    log(label, "cancelled queries", sorted(cancelled))


async def main():
    await report("r1", [("s1", 0.5, [("q1", 0.1, ValueError("q1 bad")), ("q2", 0.3)])], ("sib1", 0.4, KeyError("sib1")))
    await report("r2", [("s2", 0.2, [("q3", 0.5), ("q4", 0.6)]), ("s3", 0.4, [("q5", 0.33)])])
    await report("r3", [("s4", 0.3, [("q6", 0.5), ("q7", 0.6)])], ("sib2", 0.1, KeyError("sib2")))
    await report("r4", [("s5", 0.2, [("q8", 0.5, None, True), ("q9", 0.6)]), ("s6", 0.5, [("q10", 0.36)])])
    await report("r5", [("s7", 0.2, [("q11", 0.5, None, True)]), ("s8", 0.3, [("q12", 0.12, TypeError("q12 bad"))])])


asyncio.run(main())
