# File work kept off the loop: a chunked copy runs in to_thread and
# reports progress back with call_soon_threadsafe into an asyncio.Queue
# that a reporter task prints; tasks log through an asyncio.Queue drained
# by a writer task, which appends each record to a log file in to_thread
# and rotates the file (app.log -> app.log.1 -> app.log.2, two kept) once
# it passes a size. A copy of a missing file fails in the thread with
# FileNotFoundError, which to_thread raises in the awaiting task.
import asyncio
import os
import tempfile

from probe import log, restart

CHUNK = 4096
MAX_LOG = 30


def copy_file(src, dst, loop, progress):
    total = 0
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        while chunk := fi.read(CHUNK):
            fo.write(chunk)
            total += len(chunk)
            loop.call_soon_threadsafe(progress.put_nowait, total)
    loop.call_soon_threadsafe(progress.put_nowait, None)
    return total


def append_rotating(path, line):
    if os.path.exists(path) and os.path.getsize(path) + len(line) > MAX_LOG:
        if os.path.exists(path + ".1"):
            os.replace(path + ".1", path + ".2")
        os.replace(path, path + ".1")
        rotated = True
    else:
        rotated = False
    with open(path, "a") as f:
        f.write(line)
    return rotated


async def main():
    loop = asyncio.get_running_loop()
    restart()
    d = tempfile.mkdtemp()
    src = os.path.join(d, "data.bin")
    with open(src, "wb") as f:
        f.write(bytes(range(256)) * 40)
    progress = asyncio.Queue()
    records = asyncio.Queue()
    logpath = os.path.join(d, "app.log")

    async def reporter():
        seen = []
        while (n := await progress.get()) is not None:
            seen.append(n)
        log("progress", seen)

    async def writer():
        rotations = 0
        while (rec := await records.get()) is not None:
            if await asyncio.to_thread(append_rotating, logpath, rec + "\n"):
                rotations += 1
                log("rotated before", repr(rec))
        return rotations

    w = asyncio.create_task(writer())

    async def worker(name, n, delay):
        for i in range(n):
            await asyncio.sleep(delay)
            records.put_nowait(f"{name} step {i}")

    r = asyncio.create_task(reporter())
    copied = await asyncio.to_thread(copy_file, src, os.path.join(d, "copy.bin"), loop, progress)
    await r
    with open(os.path.join(d, "copy.bin"), "rb") as f:
        same = f.read() == bytes(range(256)) * 40
    log("copied", copied, "bytes, same:", same)
    try:
        await asyncio.to_thread(copy_file, os.path.join(d, "missing.bin"), os.path.join(d, "x"), loop, progress)
    except FileNotFoundError as e:
        log("missing source:", type(e).__name__, os.path.basename(e.filename))

    await asyncio.gather(worker("alpha", 3, 0.1), worker("beta", 2, 0.21))
    records.put_nowait(None)
    log("rotations", await w)
    for name in sorted(os.listdir(d)):
        if name.startswith("app.log"):
            with open(os.path.join(d, name)) as f:
                log(name, f.read().splitlines())
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    os.rmdir(d)


asyncio.run(main())
