# asyncio-eventloop.rst "Set signal handlers for SIGINT and SIGTERM":
# ask_exit stops the loop from inside asyncio.run, which then raises
# RuntimeError. Instead of a Ctrl+C from the user, the program sends
# itself SIGTERM after 0.1 s (call_later(os.kill)); the pid is not
# printed, and the handlers are added in a fixed order (the docs iterate
# over a set).
import asyncio
import functools
import os
import signal

from probe import d, log, restart


def ask_exit(signame, loop):
    log("got signal %s: exit" % signame)
    loop.stop()


async def main():
    loop = asyncio.get_running_loop()
    restart()

    for signame in ['SIGINT', 'SIGTERM']:
        loop.add_signal_handler(
            getattr(signal, signame),
            functools.partial(ask_exit, signame, loop))

    loop.call_later(0.1, os.kill, os.getpid(), signal.SIGTERM)
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError as e:
        log("main", d(e))
        raise

print("Event loop running for 1 hour, press Ctrl+C to interrupt.")
print("pid: send SIGINT or SIGTERM to exit.")

try:
    asyncio.run(main())
except RuntimeError as e:
    print("asyncio.run raised", d(e))
