# gather(return_exceptions=True) over tasks that succeed, fail, are
# cancelled from outside with a message, and cancel themselves by raising
# CancelledError("self"); then the outer gather is cancelled while one
# child swallows its cancellation; then a plain gather whose child is
# cancelled.
import asyncio

from probe import d, log, restart


async def ok(v, delay):
    await asyncio.sleep(delay)
    return v


async def bad(delay):
    await asyncio.sleep(delay)
    raise ValueError("bad")


async def victim():
    await asyncio.sleep(5)
    return "never"


async def self_cancel():
    await asyncio.sleep(0.1)
    raise asyncio.CancelledError("self")


async def swallow():
    try:
        await asyncio.sleep(5)
    except asyncio.CancelledError as e:
        log("swallow got", d(e), "and returns")
        return "swallowed"


async def main():
    restart()

    ts = [asyncio.create_task(ok("ok", 0.1)), asyncio.create_task(bad(0.2)),
          asyncio.create_task(victim()), asyncio.create_task(self_cancel())]
    g = asyncio.gather(*ts, return_exceptions=True)
    await asyncio.sleep(0.3)
    log("cancel victim:", ts[2].cancel("killed"))
    res = await g
    log("part 1:", ", ".join(d(r) for r in res))
    log("self_cancel task cancelled", ts[3].cancelled())

    restart()
    ts = [asyncio.create_task(ok("fast", 0.1)), asyncio.create_task(swallow()),
          asyncio.create_task(victim())]
    g = asyncio.gather(*ts, return_exceptions=True)
    await asyncio.sleep(0.2)
    log("cancel outer:", g.cancel("outer"))
    try:
        res = await g
        log("part 2 result (unexpected)", res)
    except asyncio.CancelledError as e:
        log("part 2 raised", d(e), "g.cancelled", g.cancelled())
    log("children:", ", ".join(
        "cancelled" if t.cancelled() else d(t.result()) for t in ts))

    restart()
    ts = [asyncio.create_task(ok("a", 0.2)), asyncio.create_task(victim())]
    g = asyncio.gather(*ts)
    await asyncio.sleep(0.1)
    ts[1].cancel("v")
    try:
        await g
    except asyncio.CancelledError as e:
        log("part 3 raised", d(e), "g.cancelled", g.cancelled(), "g.done", g.done(),
            "first child done", ts[0].done())
    log("first child still gives", await ts[0])


asyncio.run(main())
