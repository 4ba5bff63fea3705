# A circuit breaker (pybreaker / aiobreaker style) in front of a flaky
# service: closed until fail_max consecutive failures (errors or call
# timeouts), then open: calls are refused at once; a timer (call_later)
# moves it to half-open after reset_timeout, where one trial call is let
# through and a concurrent second one refused; the trial's success closes
# the breaker, its failure opens it again with a new timer.
import asyncio

from probe import d, log, restart


class CircuitOpenError(Exception):
    pass


class ServiceError(Exception):
    pass


class CircuitBreaker:
    def __init__(self, fail_max, reset_timeout, call_timeout):
        self.fail_max, self.reset_timeout, self.call_timeout = fail_max, reset_timeout, call_timeout
        self.state = "closed"
        self.failures = 0
        self.timer = None
        self.trial = False

    def _set(self, state):
        log("breaker:", self.state, "->", state)
        self.state = state
        if state == "open":
            self.timer = asyncio.get_running_loop().call_later(self.reset_timeout, self._set, "half-open")

    async def call(self, fn, *args):
        if self.state == "open":
            raise CircuitOpenError("open")
        trial = self.state == "half-open"
        if trial:
            if self.trial:
                raise CircuitOpenError("half-open, trial in progress")
            self.trial = True
        try:
            async with asyncio.timeout(self.call_timeout):
                result = await fn(*args)
        except (ServiceError, TimeoutError):
            self.failures += 1
            if trial or self.failures >= self.fail_max:
                self._set("open")
            raise
        else:
            self.failures = 0
            if trial:
                self._set("closed")
            return result
        finally:
            if trial:
                self.trial = False


async def service(i):
    now = asyncio.get_running_loop().time() - T0
    if 0.3 < now < 1.2:
        if i % 2:
            raise ServiceError(f"req{i} 500")
        await asyncio.sleep(1)
    await asyncio.sleep(0)
    return f"req{i} ok"


async def request(breaker, i):
    try:
        log("req", i, "->", await breaker.call(service, i))
    except (CircuitOpenError, ServiceError, TimeoutError) as e:
        log("req", i, "failed", d(e), "state", breaker.state, "failures", breaker.failures)


async def main():
    global T0
    restart()
    loop = asyncio.get_running_loop()
    T0 = loop.time()
    breaker = CircuitBreaker(fail_max=3, reset_timeout=0.35, call_timeout=0.03)
    tasks = []
    for i in range(18):
        await asyncio.sleep(T0 + 0.06 + 0.1 * i - loop.time())
        tasks.append(asyncio.create_task(request(breaker, i)))
        if i == 13:
            tasks.append(asyncio.create_task(request(breaker, 100 + i)))
    await asyncio.gather(*tasks)
    log("final state", breaker.state)


asyncio.run(main())
