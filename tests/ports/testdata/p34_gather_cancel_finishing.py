# gather() cancelled while its children are finishing in the same
# iteration: the outer error is the CancelledError of the child listed
# last, whichever finished last (its own error, a fresh one once handed
# out, one with the request's message if it swallowed the cancellation),
# and a swallowed cancellation still fails the gather (GATHER-5, 3.13).
import asyncio

from probe import d, log, restart


async def child(name, n, mode):
    try:
        for _ in range(n):
            await asyncio.sleep(0)
    except asyncio.CancelledError as e:
        log("   ", name, "cancelled", d(e))
        if mode == "swallow":
            return name + " swallowed"
        if mode == "own":
            raise asyncio.CancelledError(name + " own")
        raise
    return name


async def main():
    restart()
    for order in ("xyz", "zyx"):
        for k in range(4):
            for rex in (True, False):
                ts = {"x": asyncio.create_task(child("x", 3, "own")),
                      "y": asyncio.create_task(child("y", 1, "plain")),
                      "z": asyncio.create_task(child("z", 2, "swallow"))}
                g = asyncio.gather(*(ts[n] for n in order), return_exceptions=rex)
                for _ in range(k):
                    await asyncio.sleep(0)
                log(order, "k", k, "rex", rex, "cancel ->", g.cancel("stop"))
                try:
                    log("  result", [d(r) if isinstance(r, BaseException) else r for r in await g])
                except asyncio.CancelledError as e:
                    log("  raised", d(e), "g.cancelled", g.cancelled())
                await asyncio.gather(*ts.values(), return_exceptions=True)
                log("  states", "".join("C" if ts[n].cancelled() else "D" for n in order))
    a = asyncio.create_task(child("a", 1, "plain"))
    g = asyncio.gather(a, a, return_exceptions=True)
    await asyncio.sleep(0)
    log("dup cancel ->", g.cancel(), "a done", a.done())
    try:
        log("  result", await g)
    except asyncio.CancelledError as e:
        log("  raised", d(e))


asyncio.run(main())
