# Querying mirrors. First the plain-for form of as_completed(timeout=):
# each next() is a coroutine (not one of the tasks) that gives the next
# result in completion order; a failure comes out of its await; once the
# timeout has passed the next await raises TimeoutError, and the tasks go
# on running. Then a deadline from timeout_at() around async for over
# as_completed(), which yields the original tasks (3.13): the first good
# answer pushes the deadline back with reschedule(); when it expires the
# leftover mirrors are cancelled and gathered.
import asyncio

from probe import log, restart, rel, d


async def mirror(name, delay, fail=False):
    try:
        await asyncio.sleep(delay)
    except asyncio.CancelledError:
        log(name, "cancelled")
        raise
    if fail:
        raise ConnectionError(name)
    return f"{name}:{round(delay * 100)}"


async def main():
    restart()
    loop = asyncio.get_running_loop()
    specs = [("eu", 0.33, False), ("us", 0.12, True), ("ap", 0.51, False), ("sa", 0.21, False)]
    tasks = [asyncio.create_task(mirror(*s), name=s[0]) for s in specs]
    got = []
    for i, c in enumerate(asyncio.as_completed(tasks + [tasks[0]], timeout=0.4)):
        log("item", i, "is a task:", isinstance(c, asyncio.Task))
        try:
            r = await c
        except ConnectionError as e:
            log("failed", d(e))
            continue
        except TimeoutError:
            log("timed out at item", i, "pending", [t.get_name() for t in tasks if not t.done()])
            break
        got.append(r)
        log("result", r)
    log("got", got, "ap cancelled", tasks[2].cancelled())
    log("ap late", await tasks[2])

    restart()
    specs = [("n1", 0.43, False), ("n2", 0.26, False), ("n3", 0.83, False), ("n4", 0.14, True)]
    tasks = [asyncio.create_task(mirror(*s), name=s[0]) for s in specs]
    by_name = {t.get_name(): t for t in tasks}
    first = None
    try:
        async with asyncio.timeout_at(loop.time() + 0.3) as cm:
            log("deadline", rel(cm.when()))
            async for t in asyncio.as_completed(tasks):
                log("completed", t.get_name(), "is the task:", t is by_name[t.get_name()])
                if t.exception() is not None:
                    log("skip", d(t.exception()))
                    continue
                if first is None:
                    first = t.result()
                    cm.reschedule(cm.when() + 0.2)
                    log("first", first, "deadline now", rel(cm.when()))
                else:
                    log("also", t.result())
    except TimeoutError:
        log("deadline passed, expired", cm.expired())
    left = [t for t in tasks if not t.done()]
    for t in left:
        t.cancel()
    res = await asyncio.gather(*left, return_exceptions=True)
    log("leftovers", [t.get_name() for t in left], [d(r) for r in res])


asyncio.run(main())
