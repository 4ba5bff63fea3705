# A log-file tail watcher: a poller task checks the file's size every
# 0.05 s, reads what was appended, splits it into lines (holding back a
# partial last line until its newline comes), starts over when the file
# is truncated (rotation), and hands lines to a consumer through a queue;
# the consumer stops when no line has come for 0.25 s and cancels the
# poller, which closes nothing half-read. The file is written by another
# task on a schedule that never meets the poller's; the events are
# printed without their times (the poll ticks sit near rounding edges).
import asyncio
import os
import tempfile

events = []


async def write_log(path):
    await asyncio.sleep(0.025)
    chunks = [b"GET /a 200\n", b"GET /b 2", b"00\nPOST /c 201\n", b"", b"GET /d 404\n"]
    for chunk in chunks:
        with open(path, "ab") as f:
            f.write(chunk)
        await asyncio.sleep(0.1)
    with open(path, "wb") as f:  # rotated
        f.write(b"rotated 1\n")
    await asyncio.sleep(0.1)
    with open(path, "ab") as f:
        f.write(b"rotated 2\nunfinished")
    events.append("writer done")


async def tail(path, out, poll=0.05):
    pos = 0
    partial = b""
    polls = 0
    try:
        while True:
            polls += 1
            size = os.path.getsize(path)
            if size < pos:
                events.append(f"truncated at {pos}, reading from the start")
                pos = 0
                partial = b""
            if size > pos:
                with open(path, "rb") as f:
                    f.seek(pos)
                    data = f.read(size - pos)
                pos += len(data)
                *lines, partial = (partial + data).split(b"\n")
                for line in lines:
                    out.put_nowait(line.decode())
            await asyncio.sleep(poll)
    except asyncio.CancelledError:
        events.append(f"tail cancelled, partial {partial!r}, polled enough: {polls > 10}")
        raise


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "app.log")
        open(path, "wb").close()
        q = asyncio.Queue()
        poller = asyncio.create_task(tail(path, q))
        writer = asyncio.create_task(write_log(path))
        seen = []
        while True:
            try:
                async with asyncio.timeout(0.25):
                    line = await q.get()
            except TimeoutError:
                events.append(f"idle, stopping after {len(seen)} lines")
                break
            seen.append(line)
            events.append(f"line {line!r}")
        poller.cancel()
        try:
            await poller
        except asyncio.CancelledError:
            events.append(f"poller done {poller.done()}, writer done {writer.done()}")
        await writer
    for e in events:
        print(e)


asyncio.run(main())
