# A crawler of a site tree with nested TaskGroups under the eager task
# factory, as scrapers write it: each section gets its own TaskGroup inside
# the outer one; pages that are cached return in their eager step (done
# when create_task returns, never scheduled); a page whose fetch raises
# before its first await fails in its eager step, which aborts its section
# group at once: siblings already started are cancelled, and create_task
# on that group afterwards is refused with RuntimeError. The section's
# ExceptionGroup goes up through the outer group, which cancels the other
# sections; a section that catches its own group's failure (except*) lets
# the outer group carry on. Task names and done counts are printed.
import asyncio

from probe import d, log, restart

CACHE = {"/a/1": "A1", "/b/1": "B1"}
done_pages = []
cancelled_fetches = []


class BadPage(Exception):
    pass


async def fetch(path, delay):
    if path in CACHE:
        done_pages.append(path)
        return CACHE[path]
    if path.endswith("!"):
        raise BadPage(path)
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        # a group cancels its children in the order of a set: noted, printed sorted
        cancelled_fetches.append(path)
        raise
    done_pages.append(path)
    return path.upper()


async def section(name, pages, tolerant=False):
    results = {}
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = []
            for i, (path, delay) in enumerate(pages):
                try:
                    t = tg.create_task(fetch(path, delay), name=f"{name}-{i}")
                except RuntimeError as e:
                    log(name, "create_task refused:", d(e))
                    break
                tasks.append(t)
                log(name, "created", path, "done", t.done())
            log(name, "body ends with", len(tasks), "tasks")
        results = {t.get_name(): t.result() for t in tasks}
    except* BadPage as eg:
        if not tolerant:
            raise
        log(name, "tolerates", d(eg))
    return results


async def crawl(sections):
    restart()
    done_pages.clear()
    cancelled_fetches.clear()
    try:
        async with asyncio.TaskGroup() as outer:
            ts = [outer.create_task(section(*s), name=s[0]) for s in sections]
            log("outer created", [t.get_name() for t in ts], "done", [t.done() for t in ts])
        log("crawl ok", [t.result() for t in ts])
    except* BadPage as eg:
        log("crawl failed", d(eg), "cancelled sections", [t.get_name() for t in ts if t.cancelled()])
    log("pages done", sorted(done_pages), "cancelled", sorted(cancelled_fetches))


async def main():
    asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
    await crawl([
        ("a", [("/a/1", 0), ("/a/2", 0.1)]),
        ("b", [("/b/1", 0)]),
    ])
    await crawl([
        ("c", [("/c/1", 0.1), ("/c/2", 0.2)]),
        ("d", [("/d/1", 0.1), ("/d/2!", 0), ("/d/3", 0.1)]),
        ("e", [("/e/1", 0.3)]),
    ])
    await crawl([
        ("f", [("/f/1", 0.1), ("/f/2!", 0), ("/f/3", 0.1)], True),
        ("g", [("/g/1", 0.15), ("/g/2", 0.2)]),
    ])


asyncio.run(main())
