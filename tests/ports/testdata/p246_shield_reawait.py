# "asyncio.shielded coroutine raises CancelledError at await point despite
# being shielded", https://agentbeck.bot/report/81503
# The await of the shield raises CancelledError in the cancelled caller
# at once, while the shielded coroutine runs on; the report's pattern:
# catch the CancelledError, await the shielded task again so it
# completes, then re-raise. Adapted: a "commit" of 0.3 s; the caller
# cancelled at 0.1 s; first the naive caller (the commit finishes after
# the caller is gone), then the report's pattern.
import asyncio

from probe import d, log, restart


async def commit(name):
    log(name, "commit starts")
    await asyncio.sleep(0.3)
    log(name, "commit done")
    return f"{name}-committed"


async def naive():
    r = await asyncio.shield(commit("naive"))
    log("naive got", r)


async def careful():
    inner = asyncio.create_task(commit("careful"))
    try:
        r = await asyncio.shield(inner)
    except asyncio.CancelledError:
        log("careful: cancelled while shielded; inner done:", inner.done())
        r = await inner
        log("careful: inner finished with", r, "; re-raising")
        raise
    log("careful got", r)


async def main():
    restart()
    t = asyncio.create_task(naive())
    await asyncio.sleep(0.1)
    t.cancel()
    try:
        await t
    except asyncio.CancelledError as e:
        log("naive caller cancelled", d(e))
    await asyncio.sleep(0.3)

    restart()
    t = asyncio.create_task(careful())
    await asyncio.sleep(0.1)
    t.cancel("shutdown")
    try:
        await t
    except asyncio.CancelledError as e:
        log("careful caller cancelled", d(e), "cancelled()", t.cancelled())


asyncio.run(main())
