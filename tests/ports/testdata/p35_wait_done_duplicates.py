# wait() with futures already done, duplicates, and completions in the
# iteration wait starts in; as_completed() with done futures and a timeout
# of 0 (WAIT-2..5, ASC-1, ASC-4).
import asyncio

from probe import d, log, restart


def names(fs):
    return sorted(f.get_name() for f in fs)


async def job(n, result):
    for _ in range(n):
        await asyncio.sleep(0)
    if isinstance(result, BaseException):
        raise result
    return result


async def main():
    restart()
    ok = asyncio.create_task(job(0, "ok"), name="ok")
    bad = asyncio.create_task(job(0, ValueError("bad")), name="bad")
    gone = asyncio.create_task(job(5, "x"), name="gone")
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.sleep(0)
    slow = asyncio.create_task(job(7, "slow"), name="slow")
    soon = asyncio.create_task(job(0, ValueError("soon")), name="soon")
    for when in (asyncio.FIRST_COMPLETED, asyncio.FIRST_EXCEPTION, asyncio.ALL_COMPLETED):
        for fs in ([slow, ok, slow], [gone, slow, gone], [slow, soon, slow], [bad, bad]):
            done, pending = await asyncio.wait(fs, return_when=when)
            log(when, names(fs), "done", names(done), "pending", names(pending))
    fresh = [asyncio.create_task(job(n, n), name=f"f{n}") for n in (2, 0, 1)]
    done, pending = await asyncio.wait(fresh + fresh, return_when=asyncio.FIRST_COMPLETED)
    log("fresh done", names(done), "pending", names(pending))
    await asyncio.wait(fresh)

    late = asyncio.create_task(job(3, "late"), name="late")
    now = asyncio.create_task(job(0, "now"), name="now")
    got = []
    try:
        async for f in asyncio.as_completed([late, ok, gone, now, ok], timeout=0):
            got.append(f.get_name())
    except TimeoutError:
        got.append("timeout")
    log("as_completed", got, "late done", late.done())
    got = []
    async for f in asyncio.as_completed([late, bad, late]):
        try:
            got.append(await f)
        except BaseException as e:
            got.append(d(e))
    log("as_completed", got, "soon", d(soon.exception()))


asyncio.run(main())
