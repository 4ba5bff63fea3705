# A circuit breaker around a flaky backend, as client libraries write it:
# each call runs under asyncio.timeout(); two failures in a row (an error
# or a timeout) open the circuit; while open, calls fail fast with
# CircuitOpen until reset_after has passed on the loop's clock; then the
# breaker is half-open and lets exactly one probe through -- callers that
# arrive while the probe runs wait on an Event for its verdict instead of
# piling onto the backend. A probe that succeeds closes the circuit and
# the waiters go through; one that fails opens it again and the waiters
# fail fast. A caller cancelled while waiting for the verdict does not
# disturb the others.
import asyncio

from probe import d, log, restart


class CircuitOpen(Exception):
    pass


class BackendError(Exception):
    pass


class Breaker:
    def __init__(self, threshold=2, reset_after=0.3, timeout=0.1):
        self.loop = asyncio.get_running_loop()
        self.threshold = threshold
        self.reset_after = reset_after
        self.timeout = timeout
        self.failures = 0
        self.state = "closed"
        self.opened_at = None
        self.verdict = None

    def _open(self):
        self.state = "open"
        self.opened_at = self.loop.time()
        log("breaker opens")

    async def call(self, who, fn):
        if self.state == "open":
            if self.loop.time() - self.opened_at < self.reset_after:
                raise CircuitOpen(who)
            self.state = "half-open"
            self.verdict = asyncio.Event()
            log(who, "probes")
            return await self._run(who, fn, probe=True)
        if self.state == "half-open":
            log(who, "waits for the probe")
            await self.verdict.wait()
            return await self.call(who, fn)
        return await self._run(who, fn, probe=False)

    async def _run(self, who, fn, probe):
        try:
            async with asyncio.timeout(self.timeout):
                result = await fn()
        except (BackendError, TimeoutError) as e:
            self.failures += 1
            if probe or self.failures >= self.threshold:
                self._open()
            raise
        else:
            self.failures = 0
            if probe:
                self.state = "closed"
                log("breaker closes")
            return result
        finally:
            if probe:
                self.verdict.set()


def backend(delay, fail=False, value="ok"):
    async def fn():
        await asyncio.sleep(delay)
        if fail:
            raise BackendError(value)
        return value
    return fn


async def attempt(br, who, fn):
    try:
        r = await br.call(who, fn)
        log(who, "->", r)
    except asyncio.CancelledError:
        log(who, "cancelled")
        raise
    except Exception as e:
        log(who, "->", d(e), "state", br.state)


async def main():
    restart()
    br = Breaker()
    await attempt(br, "c1", backend(0.01, value="a"))
    await attempt(br, "c2", backend(0.01, fail=True, value="boom"))
    await attempt(br, "c3", backend(0.5))  # times out: second failure
    await attempt(br, "c4", backend(0.01))
    await asyncio.sleep(0.2)
    await attempt(br, "c5", backend(0.01))
    await asyncio.sleep(0.14)
    # half-open: one probe, two waiters, one of which gives up
    restart()
    probe = asyncio.create_task(attempt(br, "p1", backend(0.06, fail=True, value="still down")))
    await asyncio.sleep(0)
    w1 = asyncio.create_task(attempt(br, "w1", backend(0.01)))
    w2 = asyncio.create_task(attempt(br, "w2", backend(0.01)))
    await asyncio.sleep(0.02)
    w2.cancel()
    await asyncio.gather(probe, w1, w2, return_exceptions=True)
    log("after failed probe", br.state, "w2 cancelled", w2.cancelled())
    await asyncio.sleep(0.31)
    restart()
    probe = asyncio.create_task(attempt(br, "p2", backend(0.07, value="back")))
    await asyncio.sleep(0)
    waiters = [asyncio.create_task(attempt(br, f"w{i}", backend(0.01 * i, value=f"r{i}"))) for i in (3, 4)]
    await asyncio.gather(probe, *waiters)
    log("final", br.state, "failures", br.failures)


asyncio.run(main())
