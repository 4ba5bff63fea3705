# A worker log that names tasks by their default names (Task-N): the
# counter is the process's, main is Task-1, a named task takes no number,
# and every task asyncio makes for a coroutine takes one -- gather() of
# coroutines, wait_for() of a coroutine with no time left (it wraps it in
# a task), as_completed() of coroutines, a TaskGroup's children, and
# staggered_race()'s own helper tasks. (The numbers are printed relative
# to main's, as Task-1, so that the trace does not depend on how many
# tasks the process made before.)
import asyncio
from asyncio.staggered import staggered_race

from probe import log, restart

base = 0


def name(t):
    n = t.get_name()
    if n.startswith("Task-"):
        return f"Task-{int(n[5:]) - base + 1}"
    return n


async def who(label):
    log(label, "runs in", name(asyncio.current_task()))
    await asyncio.sleep(0)
    return label


async def slow(label):
    log(label, "runs in", name(asyncio.current_task()))
    try:
        await asyncio.sleep(0.1)
    except asyncio.CancelledError:
        log(label, "cancelled")
        raise
    return label


async def main():
    global base
    restart()
    base = int(asyncio.current_task().get_name()[5:])
    log("main is", name(asyncio.current_task()))
    a = asyncio.create_task(who("a"))
    n = asyncio.create_task(who("named"), name="worker-x")
    b = asyncio.create_task(who("b"))
    log("created", name(a), name(n), name(b))
    await asyncio.gather(a, n, b)
    await asyncio.gather(who("g1"), who("g2"))
    try:
        await asyncio.wait_for(who("w0"), 0)
    except TimeoutError:
        log("wait_for(coro, 0) timed out")
    log("after it", name(asyncio.create_task(who("c"))))
    await asyncio.sleep(0.01)
    async with asyncio.TaskGroup() as tg:
        t1 = tg.create_task(who("tg1"))
        t2 = tg.create_task(who("tg2"), name="tg-named")
    log("group made", name(t1), name(t2))
    for c in asyncio.as_completed([who("ac1")]):
        await c
    await staggered_race([lambda: who("s1")], None)
    log("next default", name(asyncio.create_task(who("d"))))
    await asyncio.sleep(0.01)
    r = await staggered_race([lambda: slow("s2"), lambda: who("s3")], 0.05)
    log("race won by", r[0], "next default", name(asyncio.create_task(who("e"))))
    await asyncio.sleep(0.01)


asyncio.run(main())
