# A job runner's crash reporter: its exception handler names the job
# behind each "exception was never retrieved" report from ctx["future"]
# (a task's get_name(), or that it was a plain future and is done), so
# the on-call log says which fire-and-forget job crashed silently. Jobs
# whose failure is read in a done callback (exception()), awaited, or
# cancelled after they finished (EXC-3) are not reported; a request
# future failed with set_exception and dropped is. CPython reports when
# the last reference goes (here at the end of main, in the order they
# failed); Go at the loop's close, right after main returns (FUT-10).
# The handler prints the message up to a colon (Go's task message adds
# ": <name>").
import asyncio

from probe import d, log, restart


def handler(loop, ctx):
    fut = ctx.get("future")
    if isinstance(fut, asyncio.Task):
        who = "task " + fut.get_name()
    elif fut is not None:
        who = f"future done={fut.done()}"
    else:
        who = "-"
    log("report:", ctx["message"].split(":")[0], "|", who, "|", d(ctx.get("exception")), sorted(ctx))


async def job(name, after):
    await asyncio.sleep(after)
    raise RuntimeError(f"{name} crashed")


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()
    index = asyncio.create_task(job("index", 0.05), name="index")
    resize = asyncio.create_task(job("resize", 0.1), name="resize")
    resize.add_done_callback(lambda t: log("resize watcher:", d(t.exception())))
    upload = asyncio.create_task(job("upload", 0.16), name="upload")
    thumb = asyncio.create_task(job("thumbnail", 0.2), name="thumbnail")
    notify = asyncio.create_task(job("notify", 0.24), name="notify")
    request = loop.create_future()
    loop.call_later(0.12, request.set_exception, ConnectionError("request-7 reset"))
    try:
        await upload
    except RuntimeError as e:
        log("main: upload failed", d(e))
    await asyncio.sleep(0.1)
    log("thumbnail done", thumb.done(), "cancel ->", thumb.cancel())
    await asyncio.sleep(0.05)
    log("main: drops", [t.get_name() for t in (index, notify)], "and the request future, returns")
    del resize, upload, thumb
    del index
    del request
    del notify


asyncio.run(main())
