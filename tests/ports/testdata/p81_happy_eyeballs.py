# Happy eyeballs by hand with asyncio.staggered.staggered_race (what
# loop.create_connection(happy_eyeballs_delay=...) uses): address attempts
# start a delay apart, or at once when the one before fails; the first to
# connect wins and the others are cancelled. Then every address fails, and
# then delay=None, which runs the attempts one after another.
import asyncio
from asyncio.staggered import staggered_race

from probe import d, log, restart


def attempt(host, delay, ok):
    async def connect():
        log("connect", host, "starts")
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            log("connect", host, "cancelled")
            raise
        if not ok:
            log("connect", host, "refused")
            raise ConnectionError(host)
        log("connect", host, "connected")
        return host
    return connect


async def race(delay, specs):
    restart()
    winner, index, excs = await staggered_race([attempt(*s) for s in specs], delay)
    log("winner", winner, "index", index, "exceptions", [d(e) for e in excs])


async def main():
    await race(0.21, [("a", 0.72, True), ("b", 0.1, False), ("c", 0.3, True), ("d", 0.15, True)])
    await race(0.2, [("e", 0.38, False), ("f", 0.1, False), ("g", 0.12, False)])
    await race(None, [("h", 0.1, False), ("i", 0.12, True), ("j", 0.1, True)])


asyncio.run(main())
