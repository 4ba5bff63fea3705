# asyncio-queue.rst "Examples": three workers share a queue of sleep
# times, main joins the queue, then cancels the workers and gathers them
# with return_exceptions. random.uniform(0.05, 1.0) is replaced by a fixed
# list (scaled by 0.1) that makes no ties, time.monotonic() by the
# loop's time, and the parallel time is printed to 0.1 s (real time drifts).
import asyncio

from probe import log, restart

SLEEPS = [0.031, 0.052, 0.017, 0.044, 0.063, 0.008, 0.029, 0.071, 0.036, 0.012]


async def worker(name, queue):
    while True:
        # Get a "work item" out of the queue.
        sleep_for = await queue.get()

        # Sleep for the "sleep_for" seconds.
        await asyncio.sleep(sleep_for)

        # Notify the queue that the "work item" has been processed.
        queue.task_done()

        log(f'{name} has slept for {sleep_for:.3f} seconds')


async def main():
    restart()
    loop = asyncio.get_running_loop()
    # Create a queue that we will use to store our "workload".
    queue = asyncio.Queue()

    # Generate random timings and put them into the queue.
    total_sleep_time = 0
    for sleep_for in SLEEPS:
        total_sleep_time += sleep_for
        queue.put_nowait(sleep_for)

    # Create three worker tasks to process the queue concurrently.
    tasks = []
    for i in range(3):
        task = asyncio.create_task(worker(f'worker-{i}', queue))
        tasks.append(task)

    # Wait until the queue is fully processed.
    started_at = loop.time()
    await queue.join()
    total_slept_for = loop.time() - started_at

    # Cancel our worker tasks.
    for task in tasks:
        task.cancel()
    # Wait until all worker tasks are cancelled.
    results = await asyncio.gather(*tasks, return_exceptions=True)
    log([type(r).__name__ for r in results])

    log('====')
    log(f'3 workers slept in parallel for {total_slept_for:.1f} seconds')
    log(f'total expected sleep time: {total_sleep_time:.2f} seconds')


asyncio.run(main())
