# Pipes as streams, as tools that talk over inherited descriptors do (a
# pager, a log collector; here both ends are in one process): the read
# end through connect_read_pipe with a StreamReaderProtocol, the write end
# through connect_write_pipe with a StreamWriter over its transport. Lines
# go through with drain(); the reader iterates lines with async for and
# sees EOF when the writer's write_eof() closes the pipe. When the reading
# side goes away, the write transport notices by itself (it watches its
# end for the hang-up) and closes: is_closing() turns true without a
# write, a later write is dropped, and drain() raises
# ConnectionResetError. A read transport paused with pause_reading() gets
# nothing until resume_reading().
import asyncio
import os

from probe import d, log, restart


async def pipe_pair(loop):
    r, w = os.pipe()
    reader = asyncio.StreamReader()
    rtr, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(r, "rb", 0))
    wproto = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    wtr, _ = await loop.connect_write_pipe(lambda: wproto, os.fdopen(w, "wb", 0))
    return reader, rtr, asyncio.StreamWriter(wtr, wproto, None, loop)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    reader, rtr, writer = await pipe_pair(loop)

    async def produce():
        for i in range(3):
            writer.write(f"line {i}\n".encode())
            await writer.drain()
            await asyncio.sleep(0.1)
        log("producer: can_write_eof", writer.can_write_eof())
        writer.write_eof()
        log("producer: is_closing", writer.is_closing())

    async def consume():
        lines = []
        async for line in reader:
            lines.append(line)
            log("consumer got", line)
        log("consumer: EOF", len(lines), "at_eof", reader.at_eof())

    await asyncio.gather(produce(), consume())
    await asyncio.sleep(0)
    log("read transport closing", rtr.is_closing())

    restart()
    r2, w2 = os.pipe()
    wproto = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    wtr, _ = await loop.connect_write_pipe(lambda: wproto, os.fdopen(w2, "wb", 0))
    writer2 = asyncio.StreamWriter(wtr, wproto, None, loop)
    writer2.write(b"first\n")
    await writer2.drain()
    log("reader end has", os.read(r2, 100))
    os.close(r2)
    await asyncio.sleep(0.1)
    log("after the reader left: is_closing", writer2.is_closing())
    writer2.write(b"dropped\n")
    try:
        await writer2.drain()
        log("drain ok")
    except ConnectionResetError as e:
        log("drain:", d(e))

    restart()
    reader3, rtr3, writer3 = await pipe_pair(loop)
    rtr3.pause_reading()
    log("paused, is_reading", rtr3.is_reading())
    writer3.write(b"held\n")
    await writer3.drain()
    try:
        await asyncio.wait_for(reader3.readline(), 0.1)
    except TimeoutError:
        log("nothing while paused")
    rtr3.resume_reading()
    log("resumed", await reader3.readline())
    writer3.close()
    await writer3.wait_closed()
    log("writer3 closed; reader3 then", await reader3.read(), "at_eof", reader3.at_eof())


asyncio.run(main())
