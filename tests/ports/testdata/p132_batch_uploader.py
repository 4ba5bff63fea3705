# A rate-limited batch uploader: a BoundedSemaphore allows three uploads
# at a time, a flaky upload is retried with backoff while it keeps its
# slot, asyncio.wait(return_when=FIRST_EXCEPTION) returns at the first
# fatal error and the rest are cancelled -- some while uploading, some
# while still queued on the semaphore -- and the semaphore ends as it
# started; a second batch under wait(timeout=) leaves the slow upload
# pending, and an extra release of the bounded semaphore is refused.
import asyncio

from probe import d, log, restart


def state(prim):
    return "[" + repr(prim).split("[", 1)[1]


class Fatal(Exception):
    pass


async def main():
    restart()
    sem = asyncio.BoundedSemaphore(3)
    in_flight = 0
    peak = 0
    notes = {}

    async def upload(name, cost, flaky=0, fatal=False):
        nonlocal in_flight, peak
        notes[name] = "queued"
        async with sem:
            in_flight += 1
            peak = max(peak, in_flight)
            notes[name] = "uploading"
            try:
                for attempt in range(flaky + 1):
                    await asyncio.sleep(cost)
                    if fatal:
                        raise Fatal(f"{name} rejected")
                    if attempt < flaky:
                        log(name, "attempt", attempt, "failed, backing off")
                        await asyncio.sleep(0.05 * (attempt + 1))
                        continue
                    notes[name] = "done"
                    log(name, "uploaded")
                    return name
            except asyncio.CancelledError:
                notes[name] = "cancelled while uploading"
                raise
            finally:
                in_flight -= 1

    batch = [("a", 0.1), ("b", 0.08, 3), ("c", 0.27), ("d", 0.06), ("e", 0.2, 0, True),
             ("f", 0.2), ("g", 0.1), ("h", 0.1)]
    tasks = [asyncio.create_task(upload(*spec), name=spec[0]) for spec in batch]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    failed = sorted(t.get_name() for t in done if not t.cancelled() and t.exception())
    log("first exception from", failed, "done", len(done), "pending", len(pending))
    for t in pending:
        if notes[t.get_name()] == "queued":
            notes[t.get_name()] = "cancelled while queued"
        t.cancel()
    results = await asyncio.gather(*pending, return_exceptions=True)
    log("cancelled", sum(isinstance(r, asyncio.CancelledError) for r in results))
    log("notes", sorted(notes.items()))
    log("peak", peak, "in flight", in_flight, "semaphore", state(sem))

    restart()
    notes.clear()
    second = [asyncio.create_task(upload(n, c), name=n) for n, c in (("k", 0.1), ("i", 0.4), ("j", 0.13))]
    done, pending = await asyncio.wait(second, timeout=0.22)
    log("after timeout: done", sorted(t.get_name() for t in done), "pending", sorted(t.get_name() for t in pending))
    log("slow one still", notes["i"], "semaphore", state(sem))
    done, pending = await asyncio.wait(pending)
    log("finally", [t.result() for t in done], "semaphore", state(sem))
    try:
        sem.release()
    except ValueError as e:
        log("extra release:", d(e))
    try:
        await asyncio.wait(set())
    except ValueError as e:
        log("empty wait:", d(e))


asyncio.run(main())
