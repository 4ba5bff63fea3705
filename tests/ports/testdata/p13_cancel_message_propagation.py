# Cancel messages through gather, shield, wait_for and plain awaits: the
# message given to the awaiting task reaches gather's children, the task,
# and whoever awaits the task; a shield stops it; wait_for over a shield
# times out while the shielded work goes on. Last, a task that cancels
# itself and returns without awaiting ends cancelled, its value lost.
import asyncio

from probe import d, log, restart


async def child(name, delay=1):
    try:
        await asyncio.sleep(delay)
        return name
    except asyncio.CancelledError as e:
        log("child", name, "got", d(e))
        raise


async def main():
    restart()

    async def via_gather():
        try:
            await asyncio.gather(child("a"), child("b"))
        except asyncio.CancelledError as e:
            log("gatherer got", d(e))
            raise

    p = asyncio.create_task(via_gather())
    await asyncio.sleep(0.1)
    p.cancel("stop")
    try:
        await p
    except asyncio.CancelledError as e:
        log("main saw gatherer", d(e))

    restart()
    inner = asyncio.create_task(child("inner", 0.3))

    async def via_shield():
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError as e:
            log("shielder got", d(e), "inner done", inner.done())
            raise

    p = asyncio.create_task(via_shield())
    await asyncio.sleep(0.1)
    p.cancel("bye")
    try:
        await p
    except asyncio.CancelledError as e:
        log("main saw shielder", d(e))
    log("inner still gives", await inner)

    restart()
    inner = asyncio.create_task(child("inner2", 0.3))
    try:
        await asyncio.wait_for(asyncio.shield(inner), 0.1)
    except TimeoutError as e:
        log("wait_for(shield) timed out, cause", d(e.__cause__), "inner cancelled", inner.cancelled())
    log("inner2 still gives", await inner)

    restart()

    async def chain():
        return await child("deep")

    c = asyncio.create_task(chain())
    outer = asyncio.create_task(asyncio.wait_for(c, 5))
    await asyncio.sleep(0.1)
    outer.cancel("from-top")
    r = await asyncio.gather(outer, c, return_exceptions=True)
    log("chain outcomes", [d(x) for x in r])
    try:
        c.result()
    except asyncio.CancelledError as e:
        log("c.result() raises", d(e))

    restart()

    async def self_canceller():
        log("self-cancel returns", asyncio.current_task().cancel("myself"))
        log("still running after self-cancel, cancelling", asyncio.current_task().cancelling())
        return "value"

    t = asyncio.create_task(self_canceller())
    try:
        log("self-canceller gave (unexpected)", await t)
    except asyncio.CancelledError as e:
        log("self-canceller", d(e), "cancelled", t.cancelled())


asyncio.run(main())
