# Cleanup code meeting asyncio.timeout(): (A) a body that catches the
# timeout's CancelledError, cleans up and returns normally gets no
# TimeoutError, though the scope has expired; (B) one that turns it into
# another error raises that error; (C) call_later callbacks outside the
# task move the deadline, later then sooner; (D) a deadline that passes
# while the task waits on shield(commit) leaves the commit running, and
# the task awaits it after the TimeoutError; (E) a cancel() from outside
# during the cleanup of an expired scope comes out as CancelledError, not
# TimeoutError.
import asyncio

from probe import d, log, rel, restart


async def case_a():
    me = asyncio.current_task()
    async with asyncio.timeout(0.1) as cm:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError as e:
            log("A caught", d(e), "cancelling", me.cancelling())
            await asyncio.sleep(0.07)
            log("A cleaned up")
    log("A after block: expired", cm.expired(), "cancelling", me.cancelling())


async def case_b():
    try:
        async with asyncio.timeout(0.1) as cm:
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                raise ValueError("flush failed")
    except ValueError as e:
        log("B raised", d(e), "expired", cm.expired())


async def case_c():
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(0.2) as cm:
            loop.call_later(0.1, lambda: (cm.reschedule(loop.time() + 0.5), log("C pushed to", rel(cm.when()))))
            loop.call_later(0.3, lambda: (cm.reschedule(loop.time() + 0.1), log("C pulled to", rel(cm.when()))))
            await asyncio.sleep(2)
    except TimeoutError:
        log("C timed out, expired", cm.expired())


async def commit(log_):
    await asyncio.sleep(0.3)
    log_.append("committed")
    log("D commit finished")
    return "tx-1"


async def case_d():
    log_ = []
    inner = asyncio.create_task(commit(log_))
    try:
        async with asyncio.timeout(0.1):
            await asyncio.shield(inner)
    except TimeoutError:
        log("D timed out, commit done", inner.done(), "cancelled", inner.cancelled())
    log("D awaited commit:", await inner, log_)


async def case_e():
    me = asyncio.current_task()
    async with asyncio.timeout(0.1) as cm:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            log("E cleanup starts, cancelling", me.cancelling())
            try:
                await asyncio.sleep(0.3)
            except asyncio.CancelledError as e:
                log("E cleanup cancelled", d(e), "cancelling", me.cancelling())
                raise
    log("E not reached")


async def main():
    for name, case in [("A", case_a), ("B", case_b), ("C", case_c), ("D", case_d)]:
        restart()
        await case()
    restart()
    t = asyncio.create_task(case_e())
    await asyncio.sleep(0.2)
    t.cancel("shutdown")
    try:
        await t
    except asyncio.CancelledError as e:
        log("E ended", d(e), "cancelled", t.cancelled())
    except TimeoutError:
        log("E ended with TimeoutError")


asyncio.run(main())
