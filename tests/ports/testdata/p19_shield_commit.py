# A payment service: each request handler runs its commit under shield(),
# so a client disconnect (the handler cancelled) does not interrupt it;
# the handler re-raises its cancellation, and a reconciler awaits the
# commits later: one written, one that failed (its error kept for the
# reconciler), one cancelled directly (the shield's awaiter sees the
# cancellation). Then timeout(): a slow lookup expires (expired() True),
# one whose deadline is pushed back in time finishes (expired() False).
import asyncio

from probe import d, log, rel, restart

ledger = []
commits = {}


async def commit(txn, delay, fail=False):
    log("commit", txn, "starts")
    await asyncio.sleep(delay)
    if fail:
        raise RuntimeError(f"{txn} rejected")
    ledger.append(txn)
    log("commit", txn, "written")
    return f"{txn}-ok"


async def handle(txn, delay, fail=False):
    inner = asyncio.ensure_future(commit(txn, delay, fail))
    commits[txn] = inner
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError as e:
        log("handler", txn, "cancelled", d(e), "commit done", inner.done())
        raise


async def lookup(delay):
    await asyncio.sleep(delay)
    return "found"


async def main():
    restart()
    h1 = asyncio.create_task(handle("t1", 0.3))
    h2 = asyncio.create_task(handle("t2", 0.2, fail=True))
    h3 = asyncio.create_task(handle("t3", 0.1))
    h4 = asyncio.create_task(handle("t4", 0.4))
    await asyncio.sleep(0.02)
    log("client disconnects")
    h1.cancel("disconnect")
    h2.cancel("disconnect")
    for h in (h1, h2):
        try:
            await h
        except asyncio.CancelledError as e:
            log("main saw", d(e), "cancelling", h.cancelling())
    log("h3", await h3)
    commits["t4"].cancel("operator")
    try:
        await h4
    except asyncio.CancelledError as e:
        log("h4 ended", d(e), "t4 cancelled", commits["t4"].cancelled())
    for txn in ("t1", "t2"):
        try:
            log("reconciled", txn, await commits[txn])
        except RuntimeError as e:
            log("reconcile", txn, "failed", d(e))
    log("ledger", ledger)

    restart()
    try:
        async with asyncio.timeout(0.1) as cm:
            await lookup(0.2)
    except TimeoutError:
        log("lookup timed out, expired", cm.expired())
    async with asyncio.timeout(0.1) as cm:
        cm.reschedule(cm.when() + 0.2)
        log("extended to", rel(cm.when()), "expired", cm.expired())
        log("slow lookup", await lookup(0.2))
    log("finished in time, expired", cm.expired())


asyncio.run(main())
