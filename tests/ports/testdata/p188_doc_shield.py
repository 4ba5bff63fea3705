# asyncio-task.rst "Shielding From Cancellation": res = await
# shield(something()) in a task that is cancelled; something() goes on,
# and the docs' "save a reference" form with background_tasks and a task
# awaited through shield.
import asyncio

from probe import d, log, restart

background_tasks = set()


async def something():
    log("something starts")
    await asyncio.sleep(0.3)
    log("something finishes")
    return "result"


async def caller():
    res = await asyncio.shield(something())
    log("caller got", res)


async def caller_with_task():
    task = asyncio.create_task(something())
    background_tasks.add(task)
    task.add_done_callback(background_tasks.discard)
    try:
        res = await asyncio.shield(task)
    except asyncio.CancelledError:
        log("caller cancelled, task done", task.done(), "kept", task in background_tasks)
        raise
    log("caller got", res)


async def main():
    restart()
    outer = asyncio.create_task(caller())
    await asyncio.sleep(0.1)
    outer.cancel()
    try:
        await outer
    except asyncio.CancelledError as e:
        log("outer", d(e))
    await asyncio.sleep(0.3)

    restart()
    outer = asyncio.create_task(caller_with_task())
    await asyncio.sleep(0.1)
    outer.cancel()
    try:
        await outer
    except asyncio.CancelledError as e:
        log("outer", d(e))
    log("background tasks", len(background_tasks))
    await asyncio.sleep(0.3)
    log("background tasks", len(background_tasks))

    restart()
    outer = asyncio.create_task(caller())
    await asyncio.sleep(0.4)
    log("uncancelled caller done", outer.done())

asyncio.run(main())
