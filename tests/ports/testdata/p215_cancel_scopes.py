# anyio-like cancel scopes over plain asyncio: move_on_after swallows its
# own deadline and sets cancelled_caught, fail_after lets the TimeoutError
# out; both are asyncio.timeout underneath. scope.cancel() cancels the
# task that entered the scope, and the scope swallows that cancellation
# with Task.uncancel() when it was the only one. Scopes nest: only the
# scope whose deadline passed catches it. Cleanup runs shielded: a
# cancellation arriving meanwhile waits for the cleanup, then goes on.
import asyncio

from probe import d, log, restart


class CancelScope:
    def __init__(self, name, delay=None, raise_timeout=False):
        self.name, self.delay, self.raise_timeout = name, delay, raise_timeout
        self.cancel_called = False
        self.cancelled_caught = False

    async def __aenter__(self):
        self.task = asyncio.current_task()
        self.tm = asyncio.timeout(self.delay)
        await self.tm.__aenter__()
        return self

    def cancel(self):
        if not self.cancel_called:
            self.cancel_called = True
            self.task.cancel(f"{self.name} cancelled")

    async def __aexit__(self, et, exc, tb):
        try:
            await self.tm.__aexit__(et, exc, tb)
        except TimeoutError:
            self.cancelled_caught = True
            log(self.name, "deadline passed")
            if self.raise_timeout:
                raise
            return True
        if self.cancel_called and et is asyncio.CancelledError and self.task.uncancel() == 0:
            self.cancelled_caught = True
            log(self.name, "cancel() caught")
            return True
        return False


def move_on_after(name, delay):
    return CancelScope(name, delay)


def fail_after(name, delay):
    return CancelScope(name, delay, raise_timeout=True)


async def release(name, dur):
    await asyncio.sleep(dur)
    log(name, "released its resource")


async def with_resource(name, deadline):
    try:
        async with fail_after(name, deadline):
            await asyncio.sleep(1)
    finally:
        cleanup = asyncio.create_task(release(name, 0.18))
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError as e:
            log(name, "cancelled during cleanup", d(e), "- waits for it")
            await cleanup
            raise


async def main():
    restart()
    async with move_on_after("s1", 0.2) as s1:
        await asyncio.sleep(1)
        log("not reached")
    log("s1 caught", s1.cancelled_caught)

    async with move_on_after("outer", 0.5) as outer:
        try:
            async with fail_after("inner", 0.2) as inner:
                await asyncio.sleep(1)
        except TimeoutError:
            log("inner raised TimeoutError, caught", inner.cancelled_caught)
        await asyncio.sleep(1)
    log("outer caught", outer.cancelled_caught, "task cancelling", asyncio.current_task().cancelling())

    async with move_on_after("outer2", 0.1) as outer2:
        async with move_on_after("inner2", 0.3) as inner2:
            await asyncio.sleep(1)
        log("not reached either")
    log("outer2 caught", outer2.cancelled_caught, "inner2 caught", inner2.cancelled_caught)

    async with fail_after("quick", 0.3) as quick:
        await asyncio.sleep(0.16)
    log("quick caught", quick.cancelled_caught)

    scopes = {}

    async def worker():
        async with CancelScope("manual") as scopes["manual"]:
            await asyncio.sleep(1)
        log("worker goes on after its scope, cancelling", asyncio.current_task().cancelling())
        await asyncio.sleep(0.03)
        return "worker done"

    w = asyncio.create_task(worker())
    await asyncio.sleep(0.1)
    scopes["manual"].cancel()
    log("main got", await w, "scope caught", scopes["manual"].cancelled_caught)

    r1 = asyncio.create_task(with_resource("r1", 0.19))
    await asyncio.sleep(0.29)
    r1.cancel("shutdown")
    try:
        await r1
    except asyncio.CancelledError as e:
        log("r1 ended", d(e), "cancelled", r1.cancelled())
    try:
        await with_resource("r2", 0.12)
    except TimeoutError:
        log("r2 raised TimeoutError after its cleanup")


asyncio.run(main())
