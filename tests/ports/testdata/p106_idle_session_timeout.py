# A session reader with an idle timeout and a hard deadline, as servers
# write them: asyncio.timeout(None) is armed by the first message and
# pushed back with reschedule() after each one; no message for 0.26 s
# ends the session (the TimeoutError is caught right outside that scope:
# expired() is true, when() is the deadline that fired). Around it,
# timeout_at(start + 1.0) is the session's hard limit: a chatty client that
# keeps the idle timer alive is cut off by it instead -- only the outer
# scope expired, the inner one saw a cancellation. A client that says bye
# in time ends the session with neither expired; its scope's when() is
# still the last deadline set.
import asyncio

from probe import log, rel, restart


async def session(name, gaps, idle=0.26, hard=1.0):
    loop = asyncio.get_running_loop()
    restart()
    q = asyncio.Queue()

    async def client():
        for i, gap in enumerate(gaps):
            await asyncio.sleep(gap)
            q.put_nowait("bye" if i == len(gaps) - 1 and name == "polite" else f"m{i}")

    feeder = asyncio.create_task(client())
    got = []
    idle_cm = None
    try:
        async with asyncio.timeout_at(loop.time() + hard) as hard_cm:
            try:
                async with asyncio.timeout(None) as idle_cm:
                    while True:
                        msg = await q.get()
                        got.append(msg)
                        if msg == "bye":
                            break
                        idle_cm.reschedule(loop.time() + idle)
            except TimeoutError:
                log(name, "idle timeout, expired", idle_cm.expired(), "when", rel(idle_cm.when()))
    except TimeoutError:
        log(name, "hard deadline at", rel(hard_cm.when()), "outer expired", hard_cm.expired(),
            "inner expired", idle_cm.expired())
    finally:
        feeder.cancel()
    log(name, "got", got, "scopes expired", hard_cm.expired(), idle_cm.expired(),
        "idle when", rel(idle_cm.when()))


async def main():
    await session("quiet", [0.1, 0.1, 0.4])
    await session("chatty", [0.16] * 10)
    await session("polite", [0.1, 0.2, 0.2])


asyncio.run(main())
