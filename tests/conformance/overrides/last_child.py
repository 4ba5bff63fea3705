"""gather's outer cancellation raises the LAST LISTED child's CancelledError.

B and A are cancelled; A finishes first and a watcher consumes A's stored
CancelledError (handed out once); B finishes last. CPython raises A's
(now message-less) error; the shared reference's gather_312 raised B's.
"""
import asyncio


async def main():
    async def sleeper():
        await asyncio.sleep(1)

    a = asyncio.create_task(sleeper())
    b = asyncio.create_task(sleeper())

    async def watch():
        try:
            await a
        except asyncio.CancelledError as e:
            print("watcher got", e.args)

    w = asyncio.create_task(watch())
    await asyncio.sleep(0)
    g = asyncio.gather(b, a, return_exceptions=True)
    a.cancel("m")
    g.cancel("m")
    try:
        await g
    except asyncio.CancelledError as e:
        print("gather raised", e.args)
    await w


asyncio.run(main())
