# contextlib.AsyncExitStack acquiring several resources (the way a
# service opens its db, cache and broker clients): the third fails to
# open, and the ones already open are closed in reverse order, callbacks
# pushed in between included; a cancellation while the stack unwinds
# interrupts one cleanup, the next cleanups see that cancellation; a
# resource whose __aexit__ suppresses the body's error hands None to the
# ones below it.
import asyncio
import contextlib

from probe import d, log, restart


class Resource:
    def __init__(self, name, fail_enter=False, cleanup=0.1, suppress=()):
        self.name, self.fail_enter = name, fail_enter
        self.cleanup, self.suppress = cleanup, suppress

    async def __aenter__(self):
        await asyncio.sleep(0.1)
        if self.fail_enter:
            log(self.name, "failed to open")
            raise ConnectionError(f"{self.name} unavailable")
        log(self.name, "opened")
        return self

    async def __aexit__(self, et, exc, tb):
        log(self.name, "closing, sees", d(exc) if exc else None)
        try:
            await asyncio.sleep(self.cleanup)
        except asyncio.CancelledError as e:
            log(self.name, "cleanup interrupted", d(e))
            raise
        log(self.name, "closed")
        if exc is not None and isinstance(exc, self.suppress):
            log(self.name, "suppresses", d(exc))
            return True
        return False


async def flush(what):
    await asyncio.sleep(0.1)
    log("flushed", what)


async def open_all(specs, body):
    async with contextlib.AsyncExitStack() as stack:
        opened = []
        for i, spec in enumerate(specs):
            opened.append(await stack.enter_async_context(spec))
            if i == 0:
                stack.push_async_callback(flush, "metrics")
        log("all open:", [r.name for r in opened])
        return await body()


async def main():
    restart()
    try:
        await open_all([Resource("db"), Resource("cache"), Resource("broker", fail_enter=True)],
                       lambda: asyncio.sleep(1))
    except ConnectionError as e:
        log("service start failed:", d(e))

    restart()

    async def serve():
        await asyncio.sleep(1)

    t = asyncio.create_task(open_all(
        [Resource("db"), Resource("cache", cleanup=0.5), Resource("broker")], serve))
    await asyncio.sleep(0.46)
    t.cancel("stop")
    await asyncio.sleep(0.3)
    t.cancel("stop now")
    try:
        await t
    except asyncio.CancelledError as e:
        log("service task ended", d(e), "cancelled", t.cancelled())

    restart()

    async def failing_body():
        await asyncio.sleep(0.1)
        raise ValueError("bad row")

    res = await open_all([Resource("db"), Resource("tx", suppress=(ValueError,)), Resource("cache")],
                         failing_body)
    log("open_all returned", res)


asyncio.run(main())
