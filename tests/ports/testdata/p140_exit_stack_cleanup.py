# Connection handlers that build their resources on an AsyncExitStack: a
# shared Lock, a connection whose __aexit__ awaits its close, a metrics
# flush pushed as an async callback, and a context manager suppressing
# KeyError. The exits run last-in first-out, each seeing the exception in
# flight: a suppressed KeyError lets the rest exit cleanly; a cancellation
# runs every cleanup await; a second cancel() interrupts the close and the
# stack goes on unwinding (the flush still runs, the lock is released)
# with the second CancelledError.
import asyncio
import contextlib

from probe import d, log, restart


class Conn:
    def __init__(self, name):
        self.name = name

    async def __aenter__(self):
        await asyncio.sleep(0.02)
        log(self.name, "open")
        return self

    async def __aexit__(self, et, e, tb):
        log(self.name, "closing after", d(e) if e else None)
        try:
            await asyncio.sleep(0.12)
        except asyncio.CancelledError as c:
            log(self.name, "close interrupted", d(c))
            raise
        log(self.name, "closed")
        return False


@contextlib.asynccontextmanager
async def suppress_lookup(name):
    try:
        yield
    except KeyError as e:
        log(name, "suppressed", d(e))


async def flush(name):
    await asyncio.sleep(0.03)
    log("flushed", name)


async def handler(name, lock, work):
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(lock)
        log(name, "has lock")
        stack.push_async_callback(flush, name)
        await stack.enter_async_context(Conn(name + "-conn"))
        await stack.enter_async_context(suppress_lookup(name))
        await work(name)
        log(name, "body done")
    log(name, "stack closed, lock", lock.locked())
    return name


async def ok(name):
    await asyncio.sleep(0.04)


async def missing(name):
    await asyncio.sleep(0.03)
    raise KeyError(name)


async def slow(name):
    await asyncio.sleep(1)


async def main():
    restart()
    lock = asyncio.Lock()
    t1 = asyncio.create_task(handler("a", lock, ok))
    t2 = asyncio.create_task(handler("b", lock, missing))
    t3 = asyncio.create_task(handler("c", lock, slow))
    done = await asyncio.gather(t1, t2)
    log("a and b returned", done)
    await asyncio.sleep(0.19)
    log("main cancels c")
    t3.cancel("shutdown")
    await asyncio.sleep(0.06)
    log("main cancels c again, cancelling", t3.cancelling())
    t3.cancel("hurry")
    try:
        await t3
    except asyncio.CancelledError as e:
        log("c ended", d(e), "lock", lock.locked(), "cancelling", t3.cancelling())


asyncio.run(main())
