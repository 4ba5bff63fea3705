# A backoff decorator as the backoff library's on_exception(expo, ...):
# exponential waits with full jitter from a seeded random.Random, a
# giveup predicate, max_tries and max_time (the last wait cut to the time
# left), and the on_backoff / on_giveup / on_success hooks with their
# details dicts. A caller's wait_for timeout cancels a call mid-backoff.
import asyncio
import functools
import random

from probe import d, log, restart


class ServiceError(Exception):
    def __init__(self, msg, code=503):
        super().__init__(msg)
        self.code = code


def on_exception(exc_type, *, rng, base=0.1, factor=2, max_value=0.8, max_tries=None,
                 max_time=None, giveup=lambda e: False, on_backoff=None, on_giveup=None,
                 on_success=None):
    def deco(fn):
        @functools.wraps(fn)
        async def wrapper(*args):
            loop = asyncio.get_running_loop()
            start = loop.time()
            tries = 0
            while True:
                tries += 1
                try:
                    ret = await fn(*args)
                except exc_type as e:
                    elapsed = loop.time() - start
                    details = {"target": fn.__name__, "args": args, "tries": tries}
                    if (giveup(e) or (max_tries is not None and tries >= max_tries)
                            or (max_time is not None and elapsed >= max_time)):
                        if on_giveup:
                            on_giveup(details, e)
                        raise
                    wait = rng.uniform(0, min(max_value, base * factor ** (tries - 1)))
                    details["wait"] = f"{wait:.3f}"
                    if max_time is not None and wait > max_time - elapsed:
                        wait = max_time - elapsed
                        details["wait"] = "cut to the time left"
                    if on_backoff:
                        on_backoff(details, wait, e)
                    await asyncio.sleep(wait)
                else:
                    if on_success:
                        on_success(details := {"target": fn.__name__, "args": args, "tries": tries})
                    return ret
        return wrapper
    return deco


def log_backoff(details, wait, e):
    log("backoff", details["target"], details["args"], "try", details["tries"], "wait", details["wait"], d(e))


def log_giveup(details, e):
    log("giveup", details["target"], details["args"], "after", details["tries"], "tries", d(e))


def log_success(details):
    log("success", details["target"], details["args"], "after", details["tries"], "tries")


RNG = random.Random(61)
FAILS = {"flaky": 3, "auth": 99, "down": 99, "capped": 99}
CALLS = {}


@on_exception(ServiceError, rng=RNG, max_tries=8, max_time=1.2, giveup=lambda e: e.code == 401,
              on_backoff=log_backoff, on_giveup=log_giveup, on_success=log_success)
async def call_service(name):
    CALLS[name] = CALLS.get(name, 0) + 1
    await asyncio.sleep(0.07)
    if CALLS[name] <= FAILS[name]:
        raise ServiceError(f"{name} failed #{CALLS[name]}", 401 if name == "auth" else 503)
    return f"{name} ok"


@on_exception(ServiceError, rng=RNG, max_tries=3, on_backoff=log_backoff, on_giveup=log_giveup)
async def call_capped(name):
    CALLS[name] = CALLS.get(name, 0) + 1
    await asyncio.sleep(0.07)
    raise ServiceError(f"{name} failed #{CALLS[name]}")


async def main():
    restart()
    log("got", await call_service("flaky"))
    for coro in (call_service("auth"), call_capped("capped"), call_service("down")):
        restart()
        try:
            await coro
        except ServiceError as e:
            log("raised", d(e), "code", e.code)
    CALLS.clear()
    restart()
    try:
        await asyncio.wait_for(call_service("down"), 0.5)
    except TimeoutError:
        log("wait_for gave up", "calls", CALLS)


asyncio.run(main())
