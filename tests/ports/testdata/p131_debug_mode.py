# A service run with asyncio.run(debug=True) to find what blocks its loop:
# a callback and a task step that block (time.sleep) are reported on the
# asyncio logger as "Executing ... took N seconds" warnings, the threshold
# is the loop's slow_callback_duration and can be lowered, and a
# non-thread-safe call_soon from a worker thread is refused while
# call_soon_threadsafe works. The program keeps the warnings' kind and
# shape, not their text (the handle's repr names a source line) nor the
# time they measure (real time), and prints no loop times (blocking moves
# CPython's clock, not a virtual one).
import asyncio
import logging
import time

slow = []


class Capture(logging.Handler):
    def emit(self, record):
        msg = record.getMessage()
        if msg.startswith("Executing "):
            kind = "task step" if msg.startswith("Executing <Task") else "callback"
            shape = " took " in msg and msg.endswith(" seconds")
            slow.append(f"{record.levelname} slow {kind} {shape}")


logger = logging.getLogger("asyncio")
logger.addHandler(Capture())
logger.propagate = False
logger.setLevel(logging.DEBUG)


async def main():
    loop = asyncio.get_running_loop()
    print("debug", loop.get_debug(), "threshold", loop.slow_callback_duration)

    def blocker(d):
        time.sleep(d)

    loop.call_soon(blocker, 0.15)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    print("after a blocking callback", slow)

    async def hog():
        time.sleep(0.15)
        await asyncio.sleep(0)
        return "hogged"

    print("hog ->", await asyncio.create_task(hog()), slow)

    loop.slow_callback_duration = 0.05
    print("threshold now", loop.slow_callback_duration)
    loop.call_later(0.01, blocker, 0.07)
    await asyncio.sleep(0.02)
    print("after a shorter block", slow)

    def from_thread():
        try:
            loop.call_soon(print, "never")
        except RuntimeError as e:
            return f"RuntimeError: {e}"
        return "accepted"

    print("call_soon from a thread:", await asyncio.to_thread(from_thread))
    woke = asyncio.Event()
    await asyncio.to_thread(lambda: loop.call_soon_threadsafe(woke.set))
    await woke.wait()
    print("call_soon_threadsafe from a thread woke main, reports", len(slow))


asyncio.run(main(), debug=True)
