# A service that takes over Ctrl-C inside an asyncio.Runner: its own
# loop.add_signal_handler(SIGINT) asks for a graceful stop instead of the
# runner cancelling main, and it keeps doing so in the next run on the
# same loop (the runner leaves a SIGINT that is not at its default handler
# alone); once the service removes its handler, the next run's Ctrl-C is
# the runner's again: main is cancelled and run() raises
# KeyboardInterrupt. The loop stays usable after each run.
import asyncio
import os
import signal

from probe import d, log, restart

counts = {"graceful": 0}


async def service(name, work):
    restart()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def on_int():
        counts["graceful"] += 1
        log(name, "graceful stop requested", counts["graceful"])
        stop.set()

    if name == "first":
        loop.add_signal_handler(signal.SIGINT, on_int)
    elif name == "second":
        loop.add_signal_handler(signal.SIGINT, on_int)  # replaces the handler
    loop.call_later(0.1, os.kill, os.getpid(), signal.SIGINT)
    done = 0
    try:
        while not stop.is_set() and done < work:
            await asyncio.sleep(0.04)
            done += 1
    except asyncio.CancelledError as e:
        log(name, "cancelled", d(e), "after", done)
        raise
    log(name, "stops after", done)
    return done


async def unhook():
    restart()
    removed = asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
    log("service handler removed", removed)
    return removed


with asyncio.Runner() as runner:
    for main in (lambda: service("first", 10), lambda: service("second", 10), unhook,
                 lambda: service("third", 10)):
        try:
            print("run returned", runner.run(main()))
        except KeyboardInterrupt:
            print("run raised KeyboardInterrupt")
        print("default SIGINT handler:", signal.getsignal(signal.SIGINT) is signal.default_int_handler,
              "loop closed:", runner.get_loop().is_closed())
print("graceful stops", counts["graceful"])
