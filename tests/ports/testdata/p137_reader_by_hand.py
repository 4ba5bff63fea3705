# A protocol parser tested the way its authors test it: StreamReaders fed
# by hand (feed_data from timers, feed_eof, set_exception), read with
# readuntil on one separator and on tuples of them (3.13: the match that
# ends first wins), past the limit (LimitOverrunError's consumed used to
# skip the bad record), readline on a too-long line, readexactly across
# feeds and at EOF, a read already waiting when the exception is set,
# async iteration over lines, and the separator arguments refused.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    loop = asyncio.get_running_loop()
    r = asyncio.StreamReader(limit=16)

    def feed_later(delay, *chunks):
        for c in chunks:
            loop.call_later(delay, r.feed_data, c)

    feed_later(0.1, b"HEL", b"LO\r")
    feed_later(0.2, b"\nWORLD\n")
    log("line 1", await r.readuntil((b"\r\n", b"\n")))
    log("line 2", await r.readuntil((b"\n", b"\r\n")))
    r.feed_data(b"ab|cd||ef")
    log("tuple pick", await r.readuntil((b"||", b"|")))
    log("next", await r.readuntil((b"||", b"|")))
    log("rest buffered", await r.read(10))

    r.feed_data(b"x" * 20 + b"\n")
    try:
        await r.readuntil(b"\n")
    except asyncio.LimitOverrunError as e:
        log("overrun", d(e), "consumed", e.consumed)
        log("skipped", len(await r.readexactly(e.consumed + 1)))
    r.feed_data(b"y" * 20)
    try:
        await r.readuntil((b"\n", b"\r\n"))
    except asyncio.LimitOverrunError as e:
        log("overrun", d(e), "consumed", e.consumed)
    log("dropped", len(await r.readexactly(20)))

    r.feed_data(b"z" * 20 + b"\nshort\n")
    try:
        await r.readline()
    except ValueError as e:
        log("readline", d(e))
    log("after the long line", await r.readline())

    feed_later(0.13, b"123")
    feed_later(0.17, b"45")
    log("exactly", await r.readexactly(5))
    r.feed_data(b"67")
    r.feed_eof()
    try:
        await r.readexactly(5)
    except asyncio.IncompleteReadError as e:
        log("incomplete", d(e), e.partial, e.expected)
    log("at_eof", r.at_eof(), "then", await r.read(), await r.readline(), await r.read(0), await r.readexactly(0))

    r2 = asyncio.StreamReader()
    waiting = asyncio.create_task(r2.read(10))
    await asyncio.sleep(0)
    r2.set_exception(ConnectionResetError("peer reset"))
    try:
        await waiting
    except ConnectionResetError as e:
        log("waiting read", d(e))
    log("exception()", d(r2.exception()))
    try:
        await r2.readline()
    except ConnectionResetError as e:
        log("later readline", d(e))

    r3 = asyncio.StreamReader()
    r3.feed_data(b"one\ntwo\nthree")
    r3.feed_eof()
    log("lines", [line async for line in r3])
    for sep in (b"", ()):
        try:
            await r3.readuntil(sep)
        except ValueError as e:
            log("readuntil", repr(sep), d(e))
    try:
        await r3.readexactly(-1)
    except ValueError as e:
        log("readexactly(-1)", d(e))


asyncio.run(main())
