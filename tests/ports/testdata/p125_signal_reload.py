# A service that reloads its configuration on SIGUSR1 and stops gracefully
# on SIGUSR2, both sent to itself with os.kill: the handlers run as loop
# callbacks (never inside the code that sent the signal), a handler can be
# replaced while the service runs, remove_signal_handler says whether there
# was one, the uncatchable and invalid signals are refused, and a service
# with nothing else to do waits for a signal from another thread.
import asyncio
import os
import signal
import threading

from probe import d, log, restart

events = []


async def worker(name, cfg, stopping):
    beats = 0
    while not stopping.is_set():
        await asyncio.sleep(0.1)
        beats += 1
    log(name, "stops after", beats, "beats with gen", cfg["gen"])
    return beats


async def main():
    restart()
    loop = asyncio.get_running_loop()
    cfg = {"gen": 0}
    reloaded = asyncio.Event()
    stopping = asyncio.Event()

    def on_reload(tag):
        cfg["gen"] += 1
        events.append(f"reload {tag} gen {cfg['gen']}")
        reloaded.set()

    def on_stop():
        events.append("stop requested")
        stopping.set()

    loop.add_signal_handler(signal.SIGUSR1, on_reload, "first")
    loop.add_signal_handler(signal.SIGUSR2, on_stop)
    workers = [asyncio.create_task(worker(f"w{i}", cfg, stopping)) for i in range(2)]

    await asyncio.sleep(0.17)
    os.kill(os.getpid(), signal.SIGUSR1)
    log("sent SIGUSR1, handled yet:", len(events))
    await reloaded.wait()
    reloaded.clear()
    log("after reload", events[-1])

    loop.add_signal_handler(signal.SIGUSR1, on_reload, "second")
    await asyncio.sleep(0.1)
    os.kill(os.getpid(), signal.SIGUSR1)
    await reloaded.wait()
    log("after reload", events[-1])

    for sig in (signal.SIGKILL, 0, 65):
        try:
            loop.add_signal_handler(sig, on_stop)
        except (RuntimeError, ValueError) as e:
            log("add", int(sig), "refused:", d(e))

    log("remove SIGUSR1:", loop.remove_signal_handler(signal.SIGUSR1))
    log("remove SIGUSR1 again:", loop.remove_signal_handler(signal.SIGUSR1))
    log("remove SIGHUP:", loop.remove_signal_handler(signal.SIGHUP))

    await asyncio.sleep(0.15)
    os.kill(os.getpid(), signal.SIGUSR2)
    beats = await asyncio.gather(*workers)
    log("workers stopped", beats, "events", events)
    log("remove SIGUSR2:", loop.remove_signal_handler(signal.SIGUSR2))

    # one more SIGUSR2, from another thread, while main has nothing else
    # to wait for (no time printed: the thread waits in real time)
    stopping.clear()
    loop.add_signal_handler(signal.SIGUSR2, on_stop)
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGUSR2)).start()
    await stopping.wait()
    print("woken by a signal from a thread, events", len(events))


asyncio.run(main())
