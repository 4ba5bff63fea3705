# Request-scoped context variables: each handler sets request_id, and the
# tasks it spawns see it (their context is copied at create_task); a
# child's set() stays in the child; reset(token) restores the previous
# value; a task created with context=ctx writes into ctx, where the caller
# reads it afterwards; two tasks sharing one context see each other's
# writes; a TaskGroup child inherits the body's value at spawn time. Last,
# token misuse: a token reset twice, reset in another task's context, or
# given to another variable.
import asyncio
import contextvars

from probe import log, restart

request_id = contextvars.ContextVar("request_id", default="-")
user = contextvars.ContextVar("user")


async def audit(action):
    await asyncio.sleep(0.01)
    log("audit", action, "req", request_id.get(), "user", user.get("anonymous"))


async def child_overrides():
    request_id.set("child-override")
    await asyncio.sleep(0)
    log("child sees", request_id.get())


async def handler(rid, delay):
    request_id.set(rid)
    await asyncio.sleep(delay)
    t = asyncio.create_task(audit("read"))
    request_id.set(rid + "-late")
    await t
    await asyncio.create_task(child_overrides())
    log("handler", rid, "still has", request_id.get())


async def main():
    restart()
    log("main starts with", request_id.get(), "user set", user in contextvars.copy_context())
    await asyncio.gather(handler("r1", 0.1), handler("r2", 0.2))
    log("main after handlers", request_id.get())

    tok = request_id.set("batch")
    inner = request_id.set("batch-step")
    log("nested", request_id.get())
    request_id.reset(inner)
    log("after inner reset", request_id.get())
    request_id.reset(tok)
    log("after outer reset", request_id.get())

    restart()
    ctx = contextvars.copy_context()

    async def login(name):
        user.set(name)
        request_id.set("login-" + name)
        await asyncio.sleep(0.1)

    async def whoami():
        await asyncio.sleep(0.02)
        log("whoami in shared ctx:", user.get("anonymous"), request_id.get())

    await asyncio.gather(
        asyncio.create_task(login("ana"), context=ctx),
        asyncio.create_task(whoami(), context=ctx))
    log("ctx now has user", ctx.get(user), "req", ctx[request_id])
    log("main still", user.get("anonymous"), request_id.get())

    request_id.set("group")
    async with asyncio.TaskGroup() as tg:
        tg.create_task(audit("spawned-first"))
        request_id.set("group-later")
        tg.create_task(audit("spawned-second"))
    log("group done", request_id.get())

    tok = request_id.set("once")
    request_id.reset(tok)
    try:
        request_id.reset(tok)
    except RuntimeError:
        log("token reused: RuntimeError")
    tok = request_id.set("parent")

    async def foreign_reset():
        try:
            request_id.reset(tok)
        except ValueError:
            log("token from another context: ValueError, child sees", request_id.get())

    await asyncio.create_task(foreign_reset())
    try:
        user.reset(tok)
    except ValueError:
        log("token of another var: ValueError")
    log("end", request_id.get())


asyncio.run(main())
