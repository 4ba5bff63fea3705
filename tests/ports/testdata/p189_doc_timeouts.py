# asyncio-task.rst "Timeouts": asyncio.timeout, the reschedule example
# (timeout(None) then cm.reschedule), timeout_at, and wait_for with
# eternity(), each with the docs' long_running_task/eternity scaled down
# (10 s -> 0.1 s, 20 s -> 0.2 s, 1 s -> 0.1 s).
import asyncio

from probe import log, rel, restart


async def long_running_task():
    await asyncio.sleep(3600)


async def eternity():
    # Sleep for one hour
    await asyncio.sleep(3600)
    log('yay!')


async def main():
    restart()
    try:
        async with asyncio.timeout(0.1):
            await long_running_task()
    except TimeoutError:
        log("The long operation timed out, but we've handled it.")

    log("This statement will run regardless.")

    restart()
    try:
        # We do not know the timeout when starting, so we pass ``None``.
        async with asyncio.timeout(None) as cm:
            log("when", rel(cm.when()))
            # We know the timeout now, so we reschedule it.
            new_deadline = asyncio.get_running_loop().time() + 0.1
            cm.reschedule(new_deadline)
            log("when", rel(cm.when()))

            await long_running_task()
    except TimeoutError:
        pass

    if cm.expired():
        log("Looks like we haven't finished on time.")

    restart()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 0.2
    try:
        async with asyncio.timeout_at(deadline):
            await long_running_task()
    except TimeoutError:
        log("The long operation timed out, but we've handled it.")

    log("This statement will run regardless.")

    restart()
    # Wait for at most 1 second
    try:
        await asyncio.wait_for(eternity(), timeout=0.1)
    except TimeoutError:
        log('timeout!')

asyncio.run(main())
