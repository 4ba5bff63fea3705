# A link checker crawling three local sites (start_server, a one-line
# request/response protocol: "GET /path" answered by "<status> <links>")
# with injected latency and failures: a queue of URLs, N workers, a
# per-host concurrency limit (a Semaphore per host), a global rate limit
# (a token bucket written by hand, as users do: a Lock, the loop's clock
# and sleep), retries with full-jitter exponential backoff on 5xx (a
# hand-written loop with a seeded random.Random), and a deadline for the
# whole crawl (asyncio.timeout around queue.join()) and a time budget per
# URL on one host (asyncio.timeout(None) elsewhere); results are printed
# in completion order, with a progress line from a reporter task. The
# protocol is HTTP/1.0-shaped: a request head ended by a blank line
# (readuntil), a response head with Content-Length and a body read with
# readexactly; one server cuts a body short once (IncompleteReadError,
# retried like a 5xx). The servers notice a client that hangs up while
# its answer is pending (wait_for on reader.read(1)).
import asyncio
import random

from probe import log, restart

HOST = "127.0.0.1"
WORKERS = 3
HOST_LIMITS = {"a": 2, "b": 1, "c": 2}
RATE, BURST = 10.0, 2
MAX_ATTEMPTS, BASE, CAP = 3, 0.1, 0.4
DEADLINE = 1.5
BUDGETS = {"b": 0.37}  # a time budget per URL, retries included, by host

# url -> (latency, [statuses, the last one repeating], links)
SITE = {
    "a/": (0.02, [200], ["a/docs", "b/", "c/slow", "a/missing"]),
    "a/docs": (0.07, [200], ["a/", "b/api", "b/flaky"]),
    "a/missing": (0.02, [404], []),
    "b/": (0.07, [200], ["b/api", "c/", "a/docs"]),
    "b/api": (0.02, [200], []),
    "b/flaky": (0.02, [503, 502, 200], ["c/gone"]),
    "b/down": (0.01, [503], []),
    "c/": (0.08, [200], ["c/slow", "b/down", "c/big"]),
    "c/big": (0.03, [200], ["a/", "b/", "c/", "a/docs", "b/api"]),
    "c/slow": (5.0, [200], []),
    "c/gone": (0.02, [500, 404], []),
}

served = {}  # url -> requests so far
active = {"a": 0, "b": 0, "c": 0}
peak = {"a": 0, "b": 0, "c": 0}
REASONS = {200: "OK", 404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable"}
TRUNCATE_ONCE = {"c/big"}


class ServerError(Exception):
    def __init__(self, url, status, attempts):
        super().__init__(f"{url}: {status}")
        self.status = status
        self.attempts = attempts


class TokenBucket:
    def __init__(self, rate, burst):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updated = asyncio.get_running_loop().time()
        self.lock = asyncio.Lock()

    async def acquire(self):
        loop = asyncio.get_running_loop()
        async with self.lock:
            while True:
                now = loop.time()
                self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                await asyncio.sleep((1 - self.tokens) / self.rate)


async def serve(host, reader, writer):
    head = await reader.readuntil(b"\r\n\r\n")
    method, path, version = head.decode().split("\r\n")[0].split()
    url = host + path
    n = served.get(url, 0)
    served[url] = n + 1
    active[host] += 1
    peak[host] = max(peak[host], active[host])
    try:
        latency, statuses, links = SITE.get(url, (0.01, [404], []))
        try:
            await asyncio.wait_for(reader.read(1), latency)
            log(f"server {host}: client gave up on {path}")
            return
        except TimeoutError:
            pass
        status = statuses[min(n, len(statuses) - 1)]
        body = "".join(f"{link}\n" for link in links).encode() if status == 200 else b""
        writer.write(f"HTTP/1.0 {status} {REASONS[status]}\r\n".encode())
        writer.write(f"Content-Length: {len(body)}\r\n\r\n".encode())
        if url in TRUNCATE_ONCE and n == 0:
            writer.write(body[: len(body) // 2])
            log(f"server {host}: cut {path} short")
            return
        writer.write(body)
        await writer.drain()
    finally:
        active[host] -= 1
        writer.close()
        await writer.wait_closed()


class Crawler:
    def __init__(self, ports):
        self.ports = ports
        self.queue = asyncio.Queue()
        self.seen = set()
        self.results = {}
        self.host_limits = {h: asyncio.Semaphore(n) for h, n in HOST_LIMITS.items()}
        self.bucket = TokenBucket(RATE, BURST)
        self.rng = random.Random(18)

    def add(self, url):
        if url not in self.seen:
            self.seen.add(url)
            self.queue.put_nowait(url)

    async def fetch(self, url):
        host, _, path = url.partition("/")
        reader, writer = await asyncio.open_connection(HOST, self.ports[host])
        try:
            writer.write(f"GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            head = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
            headers = dict(line.split(": ", 1) for line in head[1:] if line)
            body = await reader.readexactly(int(headers["Content-Length"]))
        finally:
            writer.close()
        return int(head[0].split()[1]), body.decode().split()

    async def fetch_with_retry(self, wid, url):
        delay = 0.0
        for attempt in range(1, MAX_ATTEMPTS + 1):
            await self.bucket.acquire()
            if attempt == 1:
                log(f"w{wid} GET {url}")
            else:
                log(f"w{wid} GET {url} again (attempt {attempt}, after {delay:.3f}s)")
            try:
                status, links = await self.fetch(url)
            except asyncio.IncompleteReadError as e:
                log(f"w{wid} {url}: body cut short, {len(e.partial)} of {e.expected} bytes")
                status, links = "truncated", []
            else:
                if status < 500:
                    return status, links, attempt
            if attempt == MAX_ATTEMPTS:
                raise ServerError(url, status, attempt)
            delay = self.rng.random() * min(CAP, BASE * 2 ** (attempt - 1))
            await asyncio.sleep(delay)

    async def check(self, wid, url):
        host = url.partition("/")[0]
        async with self.host_limits[host]:
            try:
                async with asyncio.timeout(BUDGETS.get(host)):
                    status, links, attempts = await self.fetch_with_retry(wid, url)
            except TimeoutError:
                self.results[url] = "timed out"
                log(f"w{wid} {url} over its host's budget of {BUDGETS[host]}s")
                return
            except ServerError as e:
                self.results[url] = f"gave up ({e.status})"
                log(f"w{wid} FAIL {url}: {e.status} after {e.attempts} attempts")
                return
        self.results[url] = str(status)
        log(f"w{wid} {status} {url} after {attempts} attempt(s), {len(links)} links")
        for link in links:
            self.add(link)

    async def report(self, every):
        while True:
            await asyncio.sleep(every)
            log(f"progress: {len(self.results)} checked, {self.queue.qsize()} queued,",
                f"{len(self.seen) - len(self.results) - self.queue.qsize()} in progress")

    async def worker(self, wid):
        checked = 0
        while True:
            url = await self.queue.get()
            try:
                await self.check(wid, url)
                checked += 1
            except asyncio.CancelledError:
                log(f"w{wid} cancelled while checking {url}")
                raise
            finally:
                self.queue.task_done()


async def main():
    restart()
    servers = {}
    for host in ("a", "b", "c"):
        servers[host] = await asyncio.start_server(
            lambda r, w, host=host: serve(host, r, w), HOST, 0)
    ports = {h: s.sockets[0].getsockname()[1] for h, s in servers.items()}
    crawler = Crawler(ports)
    crawler.add("a/")
    workers = [asyncio.create_task(crawler.worker(i)) for i in range(1, WORKERS + 1)]
    reporter = asyncio.create_task(crawler.report(0.43))
    try:
        async with asyncio.timeout(DEADLINE):
            await crawler.queue.join()
        log("crawl complete")
    except TimeoutError:
        unfinished = sorted(crawler.seen - crawler.results.keys())
        log("deadline: unfinished", unfinished, "queued", crawler.queue.qsize())
    reporter.cancel()
    for w in workers:
        w.cancel()
    outcomes = await asyncio.gather(*workers, return_exceptions=True)
    log("workers:", ["cancelled" if isinstance(o, asyncio.CancelledError) else o for o in outcomes])
    for srv in servers.values():
        srv.close()
        await srv.wait_closed()
    log("peak concurrency per host:", peak)
    log("requests served:", sum(served.values()), "for", len(served), "urls")
    for url in sorted(crawler.results):
        log(" ", url, crawler.results[url])


asyncio.run(main())
