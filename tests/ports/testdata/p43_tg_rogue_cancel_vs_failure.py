# In one TaskGroup a child cancels the parent task directly while a sibling
# fails, k yields apart; a third child tries to start a sibling while the
# group aborts (TG-2 "is shutting down", TG-3, TG-4, CANCEL-7).
import asyncio

from probe import d, log, restart


async def case(k):
    me = asyncio.current_task()

    async def rogue():
        for _ in range(k):
            await asyncio.sleep(0)
        log("  rogue cancels parent ->", me.cancel("rogue"))

    async def fail():
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        raise ValueError("boom")

    async def spawner(tg):
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            try:
                tg.create_task(asyncio.sleep(0))
                log("  spawner started a sibling")
            except RuntimeError as e:
                log("  spawner", d(e))
            raise

    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(rogue())
            tg.create_task(fail())
            tg.create_task(spawner(tg))
            await asyncio.sleep(1)
    except BaseException as e:
        log("  group", d(e), "cancelling", me.cancelling())
    try:
        await asyncio.sleep(0)
        log("  next await fine")
    except asyncio.CancelledError as e:
        log("  next await", d(e), "cancelling", me.cancelling())


async def main():
    restart()
    for k in range(5):
        log("rogue after", k)
        await asyncio.create_task(case(k))


asyncio.run(main())
