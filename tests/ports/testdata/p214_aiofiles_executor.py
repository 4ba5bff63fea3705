# aiofiles-like file objects: every file operation runs on a thread of
# an executor with 2 workers (loop.run_in_executor), with the disk's
# latency a time.sleep on the thread. gather returns the results in the
# order of its arguments whatever order the threads finish in; a third
# operation waits for a free worker; cancelling the task awaiting a
# running read leaves its thread to finish anyway, and cancelling one
# still queued in the executor means it never runs.
import asyncio
import concurrent.futures
import os
import tempfile
import time

from probe import d, log, restart


class AsyncFile:
    def __init__(self, loop, executor, f, name):
        self.loop, self.executor, self.f, self.name = loop, executor, f, name

    def _tlog(self, *a):
        self.loop.call_soon_threadsafe(log, "thread:", *a)

    async def _run(self, fn):
        return await self.loop.run_in_executor(self.executor, fn)

    async def write(self, data, latency):
        def op():
            time.sleep(latency)
            n = self.f.write(data)
            self.f.flush()
            self._tlog("wrote", n, "to", self.name)
            return n
        return await self._run(op)

    async def read(self, latency):
        def op():
            time.sleep(latency)
            self.f.seek(0)
            data = self.f.read()
            self._tlog("read", len(data), "from", self.name)
            return data
        return await self._run(op)

    async def close(self):
        await self._run(self.f.close)


async def aopen(executor, path, mode):
    loop = asyncio.get_running_loop()
    f = await loop.run_in_executor(executor, open, path, mode)
    return AsyncFile(loop, executor, f, os.path.basename(path))


async def main():
    restart()
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
            files = []
            for name in ("a.txt", "b.txt", "c.txt"):
                files.append(await aopen(ex, os.path.join(tmp, name), "w+"))
            a, b, c = files
            sizes = await asyncio.gather(
                a.write("alpha", 0.1), b.write("bravo!", 0.12), c.write("charlie", 0.08))
            log("written", sizes)

            datas = await asyncio.gather(a.read(0.3), b.read(0.1), c.read(0.12))
            log("read in argument order", datas)

            busy = asyncio.create_task(c.read(0.12))
            running = asyncio.create_task(a.read(0.28))
            queued = asyncio.create_task(b.read(0.2))
            await asyncio.sleep(0.1)
            running.cancel()
            queued.cancel()
            log("cancelled the running and the queued read")
            res = await asyncio.gather(busy, running, queued, return_exceptions=True)
            log("outcomes", [d(r) for r in res])
            await asyncio.sleep(0.2)
            log("after the running read's thread")

            await asyncio.gather(*(f.close() for f in files))
            log("closed", [f.f.closed for f in files])
        log("executor shut down")
        log("files", sorted(os.listdir(tmp)), [os.path.getsize(os.path.join(tmp, n)) for n in sorted(os.listdir(tmp))])


asyncio.run(main())
