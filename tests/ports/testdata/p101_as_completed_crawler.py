# A crawler that handles pages as they arrive with 3.13's async-iterator
# form of as_completed, which yields the tasks it was given (so the loop
# can ask each for its name); a failed fetch is read with exception(); a
# task already finished before the loop starts comes out first; the
# overall timeout raises TimeoutError out of the async for, after which
# the crawler cancels what is left and reports it; a second pass stops at
# the first page with a link it wants (break) and cancels the rest.
import asyncio

from probe import d, log, restart

SITE = {
    "/": (0.1, ["/a", "/b"]),
    "/a": (0.3, ["/a/1"]),
    "/b": (0.2, []),
    "/slow": (0.9, []),
    "/down": (0.16, None),
}


async def fetch(path):
    delay, links = SITE[path]
    await asyncio.sleep(delay)
    if links is None:
        raise ConnectionError(path)
    return links


async def main():
    restart()
    cached = asyncio.create_task(asyncio.sleep(0, ["/cached-link"]), name="/cached")
    await asyncio.sleep(0)
    tasks = [asyncio.create_task(fetch(p), name=p) for p in ("/slow", "/a", "/down", "/", "/b")]
    tasks.insert(2, cached)
    found = []
    try:
        async for t in asyncio.as_completed(tasks, timeout=0.5):
            if t.exception() is not None:
                log("failed", t.get_name(), d(t.exception()))
                continue
            links = await t
            found.extend(links)
            log("page", t.get_name(), "links", links)
    except TimeoutError:
        left = [t.get_name() for t in tasks if not t.done()]
        log("crawl timed out, pending", left)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        log("cancelled", [t.get_name() for t in tasks if t.cancelled()])
    log("found", sorted(found))

    restart()
    tasks = [asyncio.create_task(fetch(p), name=p) for p in ("/a", "/", "/b")]
    async for t in asyncio.as_completed(tasks):
        links = t.result()
        log("second pass", t.get_name(), links)
        if "/b" in links:
            log("wanted link found")
            break
    for t in tasks:
        t.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    log("second pass outcomes", [d(r) if isinstance(r, BaseException) else r for r in results])


asyncio.run(main())
