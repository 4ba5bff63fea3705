# A service routes the loop's error reports: its exception handler drops
# the reports it expects (a client that went away), counts them, and
# chains everything else to loop.default_exception_handler, whose log
# records the program captures (their first line: the message); a report
# the service makes itself with call_exception_handler goes the same way;
# a handler that fails is logged by asyncio; set_exception_handler(None)
# restores the default and get_exception_handler says which is set.
import asyncio
import logging

from probe import d, log, restart

logged = []


class Capture(logging.Handler):
    def emit(self, record):
        first = record.getMessage().splitlines()[0]
        if first.startswith("Exception in callback "):
            first = "Exception in callback"  # (the callback's repr follows)
        logged.append(f"{record.levelname}: {first}")


logger = logging.getLogger("asyncio")
logger.addHandler(Capture())
logger.propagate = False

dropped = []


class ClientGone(Exception):
    pass


def route(loop, ctx):
    exc = ctx.get("exception")
    if isinstance(exc, ClientGone):
        dropped.append(str(exc))
        return
    if ctx["message"] == "explode":
        raise RuntimeError("router bug")
    loop.default_exception_handler(ctx)


async def main():
    restart()
    loop = asyncio.get_running_loop()
    log("handler set at start:", loop.get_exception_handler() is None)
    loop.set_exception_handler(route)
    log("handler is route:", loop.get_exception_handler() is route)

    def gone(who):
        raise ClientGone(who)

    def broken():
        raise KeyError("config")

    loop.call_soon(gone, "c1")
    loop.call_soon(broken)
    loop.call_later(0.1, gone, "c2")
    await asyncio.sleep(0.2)
    log("dropped", dropped, "logged", logged)

    loop.call_exception_handler({"message": "disk almost full", "exception": OSError("95%")})
    loop.call_exception_handler({"message": "no exception at all"})
    loop.call_exception_handler({"message": "client report", "exception": ClientGone("c3")})
    log("dropped", dropped, "logged", logged)

    logged.clear()
    loop.call_exception_handler({"message": "explode"})
    log("after a failing handler, logged", logged)

    logged.clear()
    loop.set_exception_handler(None)
    log("handler reset:", loop.get_exception_handler() is None)
    loop.call_soon(gone, "c4")
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    log("default handler now logs", logged, "dropped", dropped)


asyncio.run(main())
