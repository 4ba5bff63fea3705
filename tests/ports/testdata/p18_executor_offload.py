# Offloading blocking work: to_thread and run_in_executor give the
# function's result or raise its exception at the await; gather runs
# several at once and keeps argument order. A task awaiting to_thread is
# cancelled once its thread has started (the thread says so through
# call_soon_threadsafe) and while it is still blocked: the await raises at once,
# the thread runs on and its result is dropped, and
# shutdown_default_executor() waits for it.
import asyncio
import threading

from probe import d, log, restart


def checksum(data):
    return sum(data) % 251


def parse(text):
    if not text.isdigit():
        raise ValueError(f"bad number {text!r}")
    return int(text)


async def main():
    restart()
    loop = asyncio.get_running_loop()
    log("checksum", await asyncio.to_thread(checksum, b"hello world"))
    log("parse", await loop.run_in_executor(None, parse, "42"))
    try:
        await loop.run_in_executor(None, parse, "4x2")
    except ValueError as e:
        log("parse failed:", d(e))
    results = await asyncio.gather(
        *(asyncio.to_thread(checksum, bytes([i + 1]) * 100) for i in range(3)))
    log("gathered", results)
    outcomes = await asyncio.gather(
        loop.run_in_executor(None, parse, "7"),
        loop.run_in_executor(None, parse, "x"),
        return_exceptions=True)
    log("outcomes", *[d(o) for o in outcomes])

    gate = threading.Event()
    finished = threading.Event()
    started = asyncio.Event()

    def slow_export():
        loop.call_soon_threadsafe(started.set)
        gate.wait()
        finished.set()
        return "exported"

    async def export():
        try:
            return await asyncio.to_thread(slow_export)
        except asyncio.CancelledError as e:
            log("export cancelled", d(e), "thread finished:", finished.is_set())
            raise

    t = asyncio.create_task(export())
    await started.wait()
    log("export running, cancelling it")
    t.cancel("user abort")
    try:
        await t
    except asyncio.CancelledError as e:
        log("main saw", d(e), "task cancelled", t.cancelled())
    gate.set()
    await loop.shutdown_default_executor()
    log("executor shut down, thread finished:", finished.is_set())
    try:
        await asyncio.to_thread(checksum, b"late")
    except RuntimeError as e:
        log("after shutdown:", d(e))


asyncio.run(main())
