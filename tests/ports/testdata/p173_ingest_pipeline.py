# An ingest pipeline across two loops: a parser runs its own event loop
# in a thread and feeds parsed records into a bounded asyncio.Queue that
# belongs to the main loop, putting with run_coroutine_threadsafe(q.put)
# awaited through wrap_future, so a full queue holds the parser back;
# the main loop's consumer handles records slowly and acks each with
# task_done. When the parser is done it waits for q.join() the same way,
# then shuts the queue down (3.13) with call_soon_threadsafe; the
# consumer ends on QueueShutDown. The parser's lines are kept in a list
# (stamped on its own loop) and printed at the end, so no line races.
import asyncio
import threading

import probe
from probe import log, restart


async def main():
    main_loop = asyncio.get_running_loop()
    restart()
    q = asyncio.Queue(maxsize=2)
    plog = []

    def tl(loop, *a):
        plog.append(" ".join([f"{loop.time() - probe._t0:.1f}", *a]))

    async def parse():
        loop = asyncio.get_running_loop()

        def on_main(coro):
            return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, main_loop))

        for i in range(5):
            await asyncio.sleep(0.04)
            start = loop.time()
            await on_main(q.put(f"r{i}"))
            tl(loop, f"put r{i}", "held back" if loop.time() - start > 0.005 else "at once")
        await on_main(q.join())
        tl(loop, "all processed")
        main_loop.call_soon_threadsafe(q.shutdown)
        tl(loop, "shutdown sent")

    async def consume():
        handled = 0
        while True:
            try:
                r = await q.get()
            except asyncio.QueueShutDown:
                log("consumer: queue shut down after", handled)
                return handled
            log("consumer got", r, "qsize", q.qsize())
            await asyncio.sleep(0.13)
            handled += 1
            q.task_done()

    consumer = asyncio.create_task(consume())
    th = threading.Thread(target=asyncio.run, args=(parse(),))
    th.start()
    n = await consumer
    await asyncio.to_thread(th.join)
    log("pipeline done, handled", n)
    for line in plog:
        print("  parser:", line)


asyncio.run(main())
