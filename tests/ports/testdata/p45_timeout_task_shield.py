# A timeout(0) around an await of a task that finishes in the iteration
# the deadline fires (either order), around a shield of that task, and a
# reschedule tried while the timeout is expiring (TMO-5, TMO-6, SHIELD-3,
# WAITFOR-5, CANCEL-4, CANCEL-5).
import asyncio

from probe import d, log, restart


async def inner(name, n):
    try:
        for _ in range(n):
            await asyncio.sleep(0)
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e))
        raise
    return name


async def main():
    restart()
    me = asyncio.current_task()
    for n in range(3):
        for created in ("before", "inside"):
            for shielded in (False, True):
                name = f"n{n}-{created}-{'s' if shielded else 'p'}"
                t = asyncio.create_task(inner(name, n)) if created == "before" else None
                try:
                    async with asyncio.timeout(0) as cm:
                        if t is None:
                            t = asyncio.create_task(inner(name, n))
                        log(name, "got", await (asyncio.shield(t) if shielded else t))
                except TimeoutError:
                    log(name, "timeout, inner", "C" if t.cancelled() else ("done" if t.done() else "running"), "cancelling", me.cancelling())
                if not t.cancelled():
                    await t
    try:
        async with asyncio.timeout(0) as cm:
            try:
                await asyncio.sleep(1)
            finally:
                try:
                    cm.reschedule(None)
                except RuntimeError as e:
                    log("reschedule:", d(e), repr(cm))
    except TimeoutError:
        log("timeout", repr(cm))


asyncio.run(main())
