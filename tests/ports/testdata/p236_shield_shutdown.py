# Protecting workers from a shutdown with asyncio.shield(), and why that
# alone is not enough, from "asyncio: How to Say Goodbye Without Losing
# Your Data", https://hackernoon.com/asyncio-how-to-say-goodbye-without-losing-your-data
# (example1: unprotected workers; example2: each worker shielded, but the
# shutdown still cancels the shielded tasks; then waiting for the
# shielded tasks before leaving). Adapted: instead of a Ctrl+C after a
# while, an outer coroutine cancels the app's main task at 0.2 s (what
# asyncio.run does with the first SIGINT); the workers take 0.5 s instead
# of 10 (0.5 + 0.005 * n s, so that none end together); 3 workers; log()
# instead of print. asyncio.run's end cancels what is left in the order of
# a set (all_tasks()), so what the workers say once main has returned is
# kept and printed sorted after asyncio.run.
import asyncio

from probe import d, log, restart

late = []
main_returned = False


def say(msg):
    if main_returned:
        late.append(msg)
    else:
        log(msg)


async def worker(n: int) -> None:
    say(f"[{n}] Started!")
    try:
        # this is a task that shouldn't be canceled in the middle
        await asyncio.sleep(0.5 + 0.005 * n)
    except asyncio.CancelledError:
        say(f"[{n}] Canceled (this is bad)!")
    else:
        say(f"[{n}] Successfully done!")


async def example1() -> None:
    tasks = []
    for n in range(3):
        tasks.append(asyncio.create_task(worker(n)))
    await asyncio.gather(*tasks)


async def example2() -> None:
    tasks = []
    for n in range(3):
        tasks.append(asyncio.shield(asyncio.create_task(worker(n))))
    await asyncio.gather(*tasks)


async def example3() -> None:
    tasks = []
    for n in range(3):
        tasks.append(asyncio.create_task(worker(n)))
    try:
        await asyncio.gather(*(asyncio.shield(t) for t in tasks))
    except asyncio.CancelledError:
        log("main cancelled: waiting for the workers")
        done, pending = await asyncio.wait(tasks)
        log("workers finished", len(done), "pending", len(pending))
        raise


async def interrupt(app, after):
    task = asyncio.create_task(app())
    await asyncio.sleep(after)
    log("^C")
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        log("App was interrupted")
    else:
        log("App was finished gracefully")


async def main(example):
    global main_returned
    restart()
    await interrupt(example, 0.2)
    log("main returns")
    main_returned = True


for example in (example1, example2, example3):
    print("---", example.__name__)
    late.clear()
    main_returned = False
    asyncio.run(main(example))
    print("after asyncio.run:", sorted(late))
