# A service's shutdown path: the request handlers are cancelled while they
# wait on a shielded commit (wait_for(shield(commit), None)), so the commit
# finishes anyway; the final flush gets a bounded wait
# (wait_for(shield(flush), 0.2)) that times out and leaves it running,
# then an unbounded one (wait_for(flush, None)); work handed to the default
# executor is waited for with shutdown_default_executor(timeout=1.0) (3.12).
import asyncio

from probe import d, log, restart

journal = []


async def commit(name, dur):
    await asyncio.sleep(dur)
    journal.append(name)
    log("commit", name, "written")
    return f"{name}-ok"


async def handler(name, dur):
    c = asyncio.create_task(commit(name, dur), name=f"commit-{name}")
    try:
        r = await asyncio.wait_for(asyncio.shield(c), None)
        log("handler", name, "got", r)
    except asyncio.CancelledError:
        log("handler", name, "cancelled, commit done:", c.done())
        raise


async def flush():
    await asyncio.sleep(0.37)
    log("flush wrote", len(journal), "entries")
    return len(journal)


def checksum(entries):
    return sum(len(e) for e in entries)


async def main():
    restart()
    loop = asyncio.get_running_loop()
    handlers = [asyncio.create_task(handler(n, dur)) for n, dur in (("a", 0.1), ("b", 0.3), ("c", 0.43))]
    await asyncio.sleep(0.2)
    log("shutdown: cancelling", sum(not h.done() for h in handlers), "handlers")
    for h in handlers:
        h.cancel()
    res = await asyncio.gather(*handlers, return_exceptions=True)
    log("handlers", [d(r) if isinstance(r, BaseException) else r for r in res])
    f = asyncio.create_task(flush(), name="flush")
    try:
        n = await asyncio.wait_for(asyncio.shield(f), 0.2)
    except TimeoutError:
        log("flush slow, still running:", not f.done())
        n = await asyncio.wait_for(f, None)
    log("flushed", n, "journal", journal)
    total = await loop.run_in_executor(None, checksum, journal)
    log("checksum", total)
    await loop.shutdown_default_executor(timeout=1.0)
    log("executor shut down")
    try:
        await loop.run_in_executor(None, checksum, journal)
    except RuntimeError as e:
        log("after shutdown:", d(e))
    await asyncio.sleep(0.3)
    log("journal", journal)


asyncio.run(main())
