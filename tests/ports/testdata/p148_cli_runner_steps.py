# A CLI driving one asyncio.Runner through several steps. Each run() is a
# new main task in the runner's context: what one step sets, the next
# sees. A step run with context= a snapshot of that context writes into
# the snapshot only. A background task started by one step keeps running
# during later steps (the loop only runs inside run()), and close()
# cancels what is left, which still gets to clean up.
import asyncio
import contextvars

from probe import log, restart

session = contextvars.ContextVar("session", default=None)
steps = contextvars.ContextVar("steps", default=())
bg = None


async def login(user):
    restart()
    session.set(user)
    steps.set(steps.get() + ("login",))
    log("logged in", user)


async def sync_bg():
    n = 0
    try:
        while True:
            await asyncio.sleep(0.1)
            n += 1
            log("bg tick", n, "session", session.get())
    except asyncio.CancelledError:
        log("bg cancelled after", n)
        await asyncio.sleep(0)
        log("bg cleaned up")
        raise


async def start_bg():
    global bg
    bg = asyncio.create_task(sync_bg(), name="bg")
    steps.set(steps.get() + ("bg",))
    await asyncio.sleep(0.16)
    log("start_bg done")


async def snapshot():
    return contextvars.copy_context()


async def fetch(what):
    await asyncio.sleep(0.23)
    steps.set(steps.get() + (what,))
    log("fetched", what, "as", session.get(), "steps", steps.get())
    return what


with asyncio.Runner() as runner:
    runner.run(login("ann"))
    runner.run(start_bg())
    print("between runs: bg done", bg.done(), "loop running", runner.get_loop().is_running())
    snap = runner.run(snapshot())
    runner.run(fetch("drafts"), context=snap)
    print("snapshot steps", snap[steps])
    runner.run(fetch("inbox"))
    print("outside the runner: session", session.get())
print("after close: bg cancelled", bg.cancelled())
