# asyncio-task.rst "Sleeping": display_date, printing the time every
# second for 5 seconds (scaled by 0.1; datetime.now() replaced by the
# loop-time offset). The loop-time check at the end of each round is the
# documented program's.
import asyncio

from probe import log, restart


async def display_date():
    loop = asyncio.get_running_loop()
    restart()
    end_time = loop.time() + 0.5
    while True:
        log("now")
        if (loop.time() + 0.1) >= end_time:
            break
        await asyncio.sleep(0.1)

asyncio.run(display_date())
