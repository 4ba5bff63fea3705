# A supervisor keeping books on its connection tasks with all_tasks() and
# current_task(). A cancelled task stays listed until it has finished its
# cleanup; a task renamed with set_name() shows its new name; inside
# wait_for(coro) current_task() is the caller (3.12+), inside
# gather(coro) a task of its own; in a call_soon callback and in a done
# callback it is None; a done callback starting a replacement task adds
# it to the books at once.
import asyncio

from probe import log, restart


def names():
    return sorted(t.get_name() for t in asyncio.all_tasks())


async def conn(name, life):
    try:
        await asyncio.sleep(life)
        log(name, "closed normally")
    except asyncio.CancelledError:
        await asyncio.sleep(0.05)
        log(name, "closed after cancel")
        raise


async def main():
    restart()
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    me.set_name("supervisor")
    log("start", names())

    async def whoami(tag):
        await asyncio.sleep(0.01)
        return f"{tag}:{asyncio.current_task() is me}"

    tasks = {n: asyncio.create_task(conn(n, life), name=n) for n, life in [("c1", 0.3), ("c2", 1), ("c3", 0.1)]}
    log("started", names(), "c1 listed", tasks["c1"] in asyncio.all_tasks())
    seen = []
    loop.call_soon(lambda: seen.append(("soon", asyncio.current_task())))

    def on_done(t):
        seen.append(("done-cb", t.get_name(), asyncio.current_task()))
        tasks["c3b"] = asyncio.create_task(conn("c3b", 0.5), name="c3b")
        seen.append(("replacement listed", "c3b" in names()))

    tasks["c3"].add_done_callback(on_done)
    await asyncio.sleep(0.12)
    log("after c3 ended", names(), "seen", seen)
    tasks["c2"].cancel()
    await asyncio.sleep(0)
    log("c2 cancelled: listed", "c2" in names(), "done", tasks["c2"].done())
    tasks["c2"].set_name("c2-closing")
    log("renamed", names())
    r = await asyncio.wait_for(whoami("wait_for"), 1)
    g = await asyncio.gather(whoami("gather1"), whoami("gather2"))
    log("whoami", r, g)
    await asyncio.sleep(0.1)
    log("after c2 finished", names(), "c2 cancelled", tasks["c2"].cancelled())
    await asyncio.gather(*tasks.values(), return_exceptions=True)
    log("all finished", names(), "current", asyncio.current_task().get_name())


asyncio.run(main())
