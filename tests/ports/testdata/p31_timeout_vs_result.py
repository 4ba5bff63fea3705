# A timeout(0) fires in the same iteration as the body's result arrives, or
# as an outside cancel: the order of the callbacks decides whether the value
# is lost (CANCEL-4, TMO-6), and which message the cancellation keeps.
import asyncio

from probe import d, log, restart


async def body(order):
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    fut = loop.create_future()

    def deliver():
        if not fut.done():
            fut.set_result("value")

    if order == "result first":
        loop.call_soon(deliver)
    if order == "ext first":
        loop.call_soon(me.cancel, "ext")
    try:
        async with asyncio.timeout(0) as cm:
            if order == "timeout first":
                loop.call_soon(deliver)
            if order == "ext second":
                loop.call_soon(me.cancel, "ext")
            log("  body awaits")
            log("  body got", await fut)
    except BaseException as e:
        log("  raised", d(e), "expired", cm.expired(), "cancelling", me.cancelling())
        if isinstance(e, asyncio.CancelledError):
            me.uncancel()
    log("  fut", "cancelled" if fut.cancelled() else fut.result(), "cancelling", me.cancelling())


async def main():
    restart()
    for order in ["result first", "timeout first", "ext first", "ext second"]:
        log(order)
        await asyncio.create_task(body(order))
    me = asyncio.current_task()
    try:
        async with asyncio.timeout(0) as cm:
            log("no await, expired", cm.expired())
        await asyncio.sleep(0)
        log("  next await fine, cancelling", me.cancelling())
    except BaseException as e:
        log("  raised", d(e), "cancelling", me.cancelling())


asyncio.run(main())
