# Extending an asyncio.timeout() deadline with reschedule(), from
# "Troubleshooting asyncio.Timeout.reschedule() and Cleaner Patterns",
# https://runebook.dev/en/docs/python/library/asyncio-task/asyncio.Timeout.reschedule
# (main_reschedule_correct), and the mistake the page warns about (a
# relative delay, reschedule(0.5), taken as an absolute time) as a second
# scope, plus a
# third whose rescheduled deadline is too short. Adapted: times in tenths
# (timeout 1.0, first part 0.3, new deadline now+0.5, second part 0.4),
# deadlines printed relative to the start (rel), log() instead of print.
import asyncio

from probe import d, log, rel, restart


async def long_task(duration):
    log(f"Task starting, will run for {duration} seconds.")
    await asyncio.sleep(duration)
    log("Task finished.")


async def main():
    loop = asyncio.get_running_loop()
    restart()

    async with asyncio.timeout(1.0) as cm:
        log(f"Initial deadline: {rel(cm.when())}")
        await long_task(0.3)
        new_deadline = loop.time() + 0.5
        cm.reschedule(new_deadline)
        log(f"New deadline set to: {rel(new_deadline)}")
        await long_task(0.4)
    log("Context manager exited gracefully.", "expired", cm.expired())

    try:
        async with asyncio.timeout(1.0) as cm:
            cm.reschedule(0.5)  # BAD: meant as 0.5 s from now, it is an absolute time, long past
            log("rescheduled to 0.5, in the past:", cm.when() < loop.time())
            await long_task(0.2)
    except TimeoutError as e:
        log("the bad reschedule timed out at once:", d(e), "expired", cm.expired())

    try:
        async with asyncio.timeout(None) as cm:
            log("no deadline:", rel(cm.when()))
            await long_task(0.1)
            cm.reschedule(loop.time() + 0.2)
            log("deadline now", rel(cm.when()))
            await long_task(0.5)
    except TimeoutError as e:
        log("second part cut short:", d(e), "expired", cm.expired())


asyncio.run(main())
