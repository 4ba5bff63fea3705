# Nested timeouts: (A) the inner deadline is pushed back with reschedule,
# then the task is cancelled from outside with a message before either
# deadline; (B) the inner deadline is pulled in and fires, the body goes
# on, tries to reschedule the expired scope, and then the outer deadline
# fires; (C) reschedule(None) disarms a scope that a later outer deadline
# then wins; (D) an outside cancel scheduled for the very deadline of a
# timeout (same iteration) wins over it; (E) a timeout around a TaskGroup
# fires while the group waits: plain children give TimeoutError, a child
# that fails while cancelled gives the ExceptionGroup instead; (F) a
# deadline rescheduled into the past fires at the next await; timeout(0)
# without an await does not fire, timeout(-1) with sleep(0) does.
import asyncio

from probe import d, log, rel, restart


async def job_a():
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    outer = inner = None
    try:
        async with asyncio.timeout(1.0) as outer:
            try:
                async with asyncio.timeout(0.5) as inner:
                    await asyncio.sleep(0.3)
                    inner.reschedule(loop.time() + 0.5)
                    log("A inner extended to", rel(inner.when()))
                    await asyncio.sleep(1)
            except TimeoutError:
                log("A inner timeout (unexpected)")
            except asyncio.CancelledError as e:
                log("A inner passes", d(e), "inner expired", inner.expired())
                raise
    except asyncio.CancelledError as e:
        log("A outer passes", d(e), "outer expired", outer.expired(),
            "cancelling", me.cancelling())
        raise


async def job_b():
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    outer = inner = None
    try:
        async with asyncio.timeout(0.6) as outer:
            try:
                async with asyncio.timeout(0.5) as inner:
                    await asyncio.sleep(0.1)
                    inner.reschedule(loop.time() + 0.1)
                    log("B inner pulled in to", rel(inner.when()))
                    await asyncio.sleep(1)
            except TimeoutError as e:
                log("B inner timeout", d(e), "cause", d(e.__cause__),
                    "expired", inner.expired(), "cancelling", me.cancelling())
            try:
                inner.reschedule(loop.time() + 1)
            except RuntimeError as e:
                log("B reschedule expired scope:", e)
            await asyncio.sleep(1)
            log("B not reached")
    except TimeoutError as e:
        log("B outer timeout", d(e), "outer expired", outer.expired(),
            "cancelling", me.cancelling())
    return "b-done"


async def job_c():
    me = asyncio.current_task()
    try:
        async with asyncio.timeout(0.3) as outer:
            async with asyncio.timeout(0.1) as inner:
                inner.reschedule(None)
                log("C inner disarmed, when", rel(inner.when()))
                await asyncio.sleep(1)
    except TimeoutError:
        log("C outer timeout, inner expired", inner.expired(),
            "outer expired", outer.expired(), "cancelling", me.cancelling())


async def job_d():
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    s = None
    try:
        async with asyncio.timeout(0.2) as s:
            loop.call_at(s.when(), me.cancel, "ext")
            await asyncio.sleep(1)
    except TimeoutError:
        log("D timeout (unexpected)")
    except asyncio.CancelledError as e:
        log("D cancel wins", d(e), "expired", s.expired(), "cancelling", me.cancelling())
        raise


async def job_e():
    me = asyncio.current_task()

    async def slowchild():
        await asyncio.sleep(1)

    async def badcleanup():
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            raise ValueError("cleanup")

    try:
        async with asyncio.timeout(0.2):
            async with asyncio.TaskGroup() as tg:
                tg.create_task(slowchild())
                tg.create_task(slowchild())
    except TimeoutError:
        log("E1 timeout, cancelling", me.cancelling())
    s = None
    try:
        async with asyncio.timeout(0.2) as s:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(slowchild())
                tg.create_task(badcleanup())
    except TimeoutError:
        log("E2 timeout (unexpected)")
    except BaseExceptionGroup as eg:
        log("E2 group", d(eg), "expired", s.expired(), "cancelling", me.cancelling())
    try:
        await asyncio.sleep(0)
        log("E2 next await fine")
    except asyncio.CancelledError as e:
        log("E2 next await raises", d(e), "cancelling", me.cancelling())
    return "e-done"


async def main():
    restart()
    t = asyncio.create_task(job_a())
    await asyncio.sleep(0.6)
    log("main cancels A")
    t.cancel("stop")
    try:
        await t
    except asyncio.CancelledError as e:
        log("main saw A", d(e), "cancelled", t.cancelled())
    restart()
    log("B starts")
    log("B returned", await asyncio.create_task(job_b()))
    restart()
    log("C starts")
    await job_c()
    restart()
    t = asyncio.create_task(job_d())
    try:
        await t
    except asyncio.CancelledError as e:
        log("main saw D", d(e))
    restart()
    log("E returned", await asyncio.create_task(job_e()))

    restart()
    loop = asyncio.get_running_loop()
    s = None
    try:
        async with asyncio.timeout(1) as s:
            await asyncio.sleep(0.1)
            s.reschedule(loop.time() - 5)
            log("F rescheduled to the past, expired", s.expired())
            await asyncio.sleep(0)
            log("F not reached")
    except TimeoutError:
        log("F past deadline fired, expired", s.expired())
    async with asyncio.timeout(0) as s0:
        pass
    log("F timeout(0) without await: expired", s0.expired())
    try:
        async with asyncio.timeout(-1):
            await asyncio.sleep(0)
    except TimeoutError:
        log("F timeout(-1) + sleep(0): TimeoutError")


asyncio.run(main())
