# Sensor threads deliver readings to the loop with call_soon_threadsafe,
# from a thread pool whose jobs the loop awaits through wrap_future: a
# delivery scheduled by a job runs before the job's own result reaches
# its awaiting task (both go through the loop's ready queue, in order);
# a delivery that raises is reported as "Exception in callback" and the
# next still runs; a delivery scheduled while the loop is held inside a
# callback (which waits for the thread, then cancels the handle the
# thread got back) never runs, and a handle cancelled from the thread
# itself neither. After asyncio.run() has closed the loop, a late sensor
# gets RuntimeError('Event loop is closed').
import asyncio
import concurrent.futures
import threading

from probe import d, log, restart

readings = []


def handler(loop, ctx):
    log("handler:", " ".join(ctx["message"].split(" ")[:3]), d(ctx.get("exception")))


def deliver(name, value):
    if value < 0:
        raise ValueError(f"{name} reading {value}")
    readings.append(f"{name}={value}")
    log("deliver", name, value)


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)

    def sensor(name, value):
        loop.call_soon_threadsafe(deliver, name, value)
        return f"{name} sent"

    for name, value in [("t1", 21), ("t2", -5), ("t3", 19)]:
        log("job ->", await asyncio.wrap_future(pool.submit(sensor, name, value)))

    holder = {}
    asked, answered = threading.Event(), threading.Event()

    def late_sensor():
        asked.wait()
        holder["h"] = loop.call_soon_threadsafe(deliver, "held", 1)
        h2 = loop.call_soon_threadsafe(deliver, "self-cancelled", 2)
        h2.cancel()
        answered.set()
        return h2.cancelled()

    job = asyncio.wrap_future(pool.submit(late_sensor))

    def hold_loop():
        asked.set()
        answered.wait()
        holder["h"].cancel()
        log("loop held: cancelled the handle", holder["h"].cancelled())

    loop.call_soon(hold_loop)
    log("self-cancelled ->", await job)
    await asyncio.sleep(0.1)
    log("readings", readings)
    pool.shutdown(wait=True)
    return loop


loop = asyncio.run(main())
try:
    loop.call_soon_threadsafe(deliver, "after", 0)
except RuntimeError as e:
    print("after run:", d(e))
