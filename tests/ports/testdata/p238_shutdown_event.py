# "signal handlers should coordinate shutdown, not execute it", from "Just
# Gracefully Shutdown", https://matcohle.me/just-gracefully-shutdown: the
# handler only sets an asyncio.Event; main waits for it inside a
# TaskGroup and then cancels just its own tasks (not all_tasks(), which
# would reach library internals: here a "library" background task that
# must be left alone and is closed by its own close()). Adapted: instead
# of SIGTERM from outside, a call_later calls the handler at 0.36 s; the
# workers loop on sleeps of their own length and say how they end;
# log() instead of print.
import asyncio

from probe import d, log, restart


def handle_signal(s, e: asyncio.Event):
    log("signal", s, "received: setting the shutdown event")
    e.set()  # just signal, don't execute


async def worker(name, period):
    n = 0
    try:
        while True:
            await asyncio.sleep(period)
            n += 1
            log(name, "tick", n)
    except asyncio.CancelledError:
        log(name, "cancelled after", n, "ticks, cleaning up")
        await asyncio.sleep(0.02)
        log(name, "clean")
        raise


class LibraryClient:
    """Stands for a third-party library with a task of its own."""

    def __init__(self):
        self.flushed = 0
        self.task = asyncio.create_task(self._flusher())

    async def _flusher(self):
        while True:
            await asyncio.sleep(0.11)
            self.flushed += 1

    async def close(self):
        self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            pass
        log("library closed after", self.flushed, "flushes")


async def main():
    restart()
    loop = asyncio.get_running_loop()
    event = asyncio.Event()
    loop.call_later(0.36, handle_signal, "SIGTERM", event)
    lib = LibraryClient()
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [
                tg.create_task(worker("fast", 0.1)),
                tg.create_task(worker("slow", 0.22)),
            ]
            await event.wait()
            # signal received, now it's time to execute the shutdown
            log("shutting down", len(tasks), "tasks; library task done:", lib.task.done())
            for t in tasks:
                t.cancel()  # <- the solution, cancel just our own tasks
        log("task group exited", [t.cancelled() for t in tasks])
    finally:
        await lib.close()


asyncio.run(main())
