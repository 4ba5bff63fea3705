# Happy eyeballs where an early address fails slowly, after the next one
# has already been started by the delay: staggered_race() starts a new
# attempt only when the latest one fails or its delay passes, so that
# failure starts nothing; the third address still starts a delay after
# the second. Then the same early failure followed by the second
# address failing: only that second failure starts the third at once.
import asyncio
from asyncio.staggered import staggered_race

from probe import d, log, restart


def attempt(name, delay, ok):
    async def connect():
        log(name, "starts")
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            log(name, "cancelled")
            raise
        if not ok:
            log(name, "fails")
            raise ConnectionError(name)
        log(name, "connects")
        return name
    return connect


async def race(delay, specs):
    restart()
    winner, index, excs = await staggered_race([attempt(*s) for s in specs], delay)
    log("winner", winner, "index", index, "exceptions", [d(e) for e in excs])


async def main():
    await race(0.2, [("a0", 0.3, False), ("a1", 0.5, True), ("a2", 0.11, True)])
    await race(0.2, [("b0", 0.33, False), ("b1", 0.26, False), ("b2", 0.27, True), ("b3", 0.2, True)])


asyncio.run(main())
