# Two Ctrl-Cs while a TaskGroup shuts down: the first SIGINT cancels the
# main task, the group cancels its children and waits for their cleanup;
# a second SIGINT during that cleanup makes asyncio.run stop waiting and
# raise KeyboardInterrupt, after it cancels what is left (the cleanups
# are cancelled in turn) and waits for it. A child that already finished
# keeps its result.
import asyncio
import os
import signal

from probe import d, log, restart

events = []


async def child(name, delay):
    try:
        await asyncio.sleep(delay)
        log(name, "finished")
        return name
    except asyncio.CancelledError:
        log(name, "cancelled, cleaning up")
        try:
            await asyncio.sleep(0.1)
            log(name, "cleanup done")
        except asyncio.CancelledError:
            events.append(f"{name} cleanup cancelled")
            raise
        raise


async def main():
    restart()
    loop = asyncio.get_running_loop()
    loop.call_later(0.1, os.kill, os.getpid(), signal.SIGINT)
    loop.call_later(0.15, os.kill, os.getpid(), signal.SIGINT)
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(child(n, dl), name=n) for n, dl in (("a", 1), ("b", 0.03), ("c", 1))]
    except asyncio.CancelledError as e:
        events.append(f"main saw {d(e)}")
        raise
    finally:
        events.append("main finally, children " + str(sorted((t.get_name(), t.done()) for t in tasks)))


try:
    asyncio.run(main())
except KeyboardInterrupt:
    print("asyncio.run raised KeyboardInterrupt")
for e in events:
    print(e)
