# Request-scoped context variables: a snapshot taken with copy_context()
# keeps the values of its moment; a task created with context=ctx writes
# into that snapshot (and get_context() returns it), not into main's
# context; TaskGroup children set their own values without leaking to the
# parent; to_thread carries the caller's values into the thread; a token
# resets a value; a second task run in the same snapshot sees what the
# first left there. A fresh Context() prepared with Context.run(var.set)
# runs a job that sees only that value. A blocking helper on to_thread that calls back into
# the loop with run_coroutine_threadsafe: the coroutine's task starts in
# the thread's context, the copy to_thread made of the caller's.
import asyncio
import contextvars

from probe import log, restart

user = contextvars.ContextVar("user", default="anon")
trace = contextvars.ContextVar("trace")


async def audit(tag, delay):
    log(tag, "starts as", user.get(), trace.get("no-trace"))
    trace.set(tag)
    await asyncio.sleep(delay)
    user.set("auditor")
    log(tag, "done")


async def child(name, delay):
    user.set(name)
    await asyncio.sleep(delay)
    log(name, "sees", user.get(), trace.get("no-trace"))
    return name


def blocking(what):
    return f"{what}:{user.get()}/{trace.get('none')}"


async def main():
    restart()
    user.set("alice")
    ctx = contextvars.copy_context()
    user.set("bob")
    log("ctx has", ctx[user], "main has", user.get())
    t = asyncio.create_task(audit("audit-1", 0.1), context=ctx)
    await t
    log("after audit: ctx", ctx[user], ctx.get(trace), "main", user.get(), trace.get("unset"))
    log("get_context is ctx", t.get_context() is ctx)
    t2 = asyncio.create_task(audit("audit-2", 0.06), context=ctx)
    await t2
    log("ctx now", ctx[user], ctx.get(trace))
    trace.set("req-9")
    async with asyncio.TaskGroup() as tg:
        a = tg.create_task(child("carol", 0.2))
        b = tg.create_task(child("dave", 0.1))
    log("main after group", user.get(), [a.result(), b.result()])
    token = user.set("eve")
    log("thread saw", await asyncio.to_thread(blocking, "t1"))
    user.reset(token)
    log("after reset", user.get())
    t3 = asyncio.create_task(asyncio.to_thread(blocking, "t2"), context=ctx)
    log("thread in ctx saw", await t3)
    own = asyncio.create_task(child("frank", 0.05))
    await own
    log("frank's context", own.get_context()[user], "main", user.get())

    loop = asyncio.get_running_loop()

    async def lookup_user():
        await asyncio.sleep(0.01)
        return f"{user.get()}/{trace.get('none')}"

    def legacy_hook():
        return "hook saw " + asyncio.run_coroutine_threadsafe(lookup_user(), loop).result()

    job_ctx = contextvars.Context()
    job_ctx.run(user.set, "batch")
    log("fresh ctx has", job_ctx[user], "main", user.get())
    log("job saw", await asyncio.create_task(asyncio.to_thread(blocking, "t3"), context=job_ctx))

    token = user.set("grace")
    log(await asyncio.to_thread(legacy_hook))
    user.reset(token)


asyncio.run(main())
