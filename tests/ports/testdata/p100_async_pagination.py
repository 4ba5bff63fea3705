# An API client pages through results with async generators: pages()
# fetches one page per await and closes its session in a finally that
# awaits; items() flattens it. Consumers: one reads everything; one stops
# at the first item it wants, inside contextlib.aclosing(), so both
# generators are closed right there, inner first (their finally blocks
# await); one whose task is cancelled while the generator waits for a
# page -- the generator sees the CancelledError at its await, closes the
# session and re-raises; one that meets a page that fails to load -- the
# session is closed before the consumer sees the error.
import asyncio
import contextlib

from probe import d, log, restart

PAGES = {
    "p1": (["a1", "a2"], "p2"),
    "p2": (["b1", "b2"], "p3"),
    "p3": (["c1"], None),
    "e1": (["x1"], "bad"),
}


async def fetch_page(token):
    await asyncio.sleep(0.1)
    if token == "bad":
        raise ConnectionError("page bad")
    log("fetched", token)
    return PAGES[token]


async def pages(start, name):
    token = start
    try:
        while token is not None:
            items, token = await fetch_page(token)
            yield items
    except asyncio.CancelledError:
        log(name, "cancelled while fetching", token)
        raise
    finally:
        await asyncio.sleep(0.02)
        log(name, "session closed")


async def items(start, name):
    async with contextlib.aclosing(pages(start, name + "/pages")) as ps:
        try:
            async for page in ps:
                for it in page:
                    yield it
        finally:
            log(name, "items closing")


async def main():
    restart()
    got = [it async for it in items("p1", "all")]
    log("all items", got)

    restart()
    async with contextlib.aclosing(items("p1", "find")) as its:
        async for it in its:
            if it.startswith("b"):
                log("found", it)
                break
    log("after find")

    restart()
    seen = []

    async def consume():
        async with contextlib.aclosing(pages("p1", "slow")) as ps:
            async for page in ps:
                seen.extend(page)
                await asyncio.sleep(0.05)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.24)
    log("cancelling consumer, seen", seen)
    task.cancel("user left")
    try:
        await task
    except asyncio.CancelledError as e:
        log("consumer", d(e), "cancelled", task.cancelled())

    restart()
    got = []
    try:
        async with contextlib.aclosing(items("e1", "broken")) as its:
            async for it in its:
                got.append(it)
    except ConnectionError as e:
        log("broken listing:", d(e), "got", got)


asyncio.run(main())
