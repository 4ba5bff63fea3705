# asyncio-task.rst "Coroutines": the three say_after programs (awaited one
# after the other, then as two create_task tasks, then in a TaskGroup),
# with the delays scaled by 0.1 and time.strftime('%X') replaced by the
# loop-time offset log() prints.
import asyncio

from probe import log, restart


async def say_after(delay, what):
    await asyncio.sleep(delay)
    log(what)


async def main():
    restart()
    log("started at")
    await say_after(0.1, 'hello')
    await say_after(0.2, 'world')
    log("finished at")

    restart()
    task1 = asyncio.create_task(
        say_after(0.1, 'hello'))

    task2 = asyncio.create_task(
        say_after(0.2, 'world'))

    log("started at")

    # Wait until both tasks are completed (should take
    # around 2 seconds.)
    await task1
    await task2

    log("finished at")

    restart()
    async with asyncio.TaskGroup() as tg:
        task1 = tg.create_task(
            say_after(0.1, 'hello'))

        task2 = tg.create_task(
            say_after(0.2, 'world'))

        log("started at")

    # The await is implicit when the context manager exits.

    log("finished at")

asyncio.run(main())
