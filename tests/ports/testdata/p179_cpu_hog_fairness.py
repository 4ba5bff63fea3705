# A CPU-heavy export shares the loop with an API task and a heartbeat:
# it works in chunks (time.sleep stands for the CPU work, holding the
# loop) and yields with sleep(0) between them. While a chunk runs, the
# heartbeat's sleep and a call_later fall due; at each yield the tasks
# already ready run first, then the timers that fell due, in deadline
# order, and the task a timer wakes runs one iteration after its timer.
# The heartbeat says whether it woke late.
import asyncio
import time

from probe import log, restart


async def export():
    for i in range(3):
        time.sleep(0.06)
        log("export chunk", i)
        await asyncio.sleep(0)
    log("export done")


async def api():
    for i in range(5):
        log("api step", i)
        await asyncio.sleep(0)


async def heartbeat():
    loop = asyncio.get_running_loop()
    for i in range(4):
        expected = loop.time() + 0.02
        await asyncio.sleep(0.02)
        log("heartbeat", i, "late" if loop.time() - expected > 0.01 else "on time")


async def main():
    loop = asyncio.get_running_loop()
    restart()
    loop.call_later(0.03, log, "timer 0.03")
    loop.call_later(0.07, log, "timer 0.07")
    await asyncio.gather(export(), api(), heartbeat())
    log("all done")


asyncio.run(main())
