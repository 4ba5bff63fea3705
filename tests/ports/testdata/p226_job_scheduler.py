# A job scheduler/worker service: jobs with priorities in a PriorityQueue
# ((priority, seq, id), lower first), cron-like periodic jobs driven by
# loop.call_at (each firing re-arms itself from its own scheduled time, so
# it does not drift), a pool of workers in a TaskGroup running each job as
# a task of its own under asyncio.timeout (a per-job limit), retries with
# exponential backoff (loop.call_later) for failing jobs, a dead-letter
# queue read by an alerter task, job cancellation by id from a control
# task (a queued job is skipped when its turn comes, a running one has its
# task cancelled: the worker tells that from its own cancellation with
# cancelling()), results saved through to_thread into a fake store (a
# threading.Lock and a blocking sleep per save), and a graceful shutdown
# on an Event: the crons and pending retries are cancelled, the queue is
# emptied and shut down, busy workers get a grace period and are then
# cancelled; a save in flight is shielded, so it completes and is awaited
# before the final report.
import asyncio
import itertools
import threading
import time

from probe import log, restart

WORKERS = 3
MAX_ATTEMPTS = 3
BACKOFF = 0.4
SAVE_TIME = 0.12
GRACE = 0.6
SHUTDOWN_AT = 3.58


class JobError(Exception):
    pass


class Job:
    def __init__(self, jid, prio, duration, fails=0, timeout=None):
        self.id = jid
        self.prio = prio
        self.duration = duration
        self.fails = fails
        self.timeout = timeout
        self.attempts = 0


class Store:
    def __init__(self):
        self.lock = threading.Lock()
        self.rows = {}
        self.version = 0

    def open(self):
        with self.lock:
            self.rows.clear()

    def save(self, key, value):
        with self.lock:
            time.sleep(SAVE_TIME)
            self.version += 1
            self.rows[key] = (value, self.version)
            return self.version


store = Store()
queue = asyncio.PriorityQueue()
dead_letters = asyncio.Queue()
stopping = asyncio.Event()
seq = itertools.count()
jobs = {}  # id -> Job, in submission order
outcomes = {}  # id -> how it ended
running = {}  # id -> the job's task
cancel_requested = set()
retries = {}  # id -> TimerHandle of the pending retry
persisting = set()
abandoned = []


def enqueue(job):
    queue.put_nowait((job.prio, next(seq), job.id))


def submit(job, source):
    jobs[job.id] = job
    enqueue(job)
    log(source, "submits", job.id, "prio", job.prio, "queued", queue.qsize())


class Cron:
    def __init__(self, name, first, every, prio, duration):
        self.name, self.first, self.every = name, first, every
        self.prio, self.duration = prio, duration
        self.runs = 0
        self.handle = None

    def arm(self, when):
        self.handle = asyncio.get_running_loop().call_at(when, self.fire, when)

    def fire(self, when):
        self.runs += 1
        submit(Job(f"{self.name}#{self.runs}", self.prio, self.duration), "cron")
        self.arm(when + self.every)


crons = [Cron("heartbeat", 0.56, 1.1, 0, 0.09), Cron("compact", 2.56, 2.0, 2, 0.04)]


def requeue(job):
    del retries[job.id]
    log("retry of", job.id, "is due")
    enqueue(job)


async def body(job):
    await asyncio.sleep(job.duration)
    if job.attempts <= job.fails:
        raise JobError(f"{job.id} attempt {job.attempts} failed")
    return f"{job.id}-done"


async def persist(wname, job, result):
    save = asyncio.create_task(asyncio.to_thread(store.save, job.id, result))
    persisting.add(save)
    save.add_done_callback(persisting.discard)
    try:
        version = await asyncio.shield(save)
    except asyncio.CancelledError:
        log(wname, "cancelled while saving", job.id, "; the save goes on")
        outcomes[job.id] = "saved after shutdown"
        raise
    outcomes[job.id] = f"ok v{version}"
    log(wname, "saved", job.id, "as version", version)


async def run_job(wname, job):
    loop = asyncio.get_running_loop()
    if job.id in cancel_requested:
        log(wname, "skips", job.id, "(cancelled while queued)")
        outcomes[job.id] = "cancelled while queued"
        return
    job.attempts += 1
    log(wname, "starts", job.id, "attempt", job.attempts)
    task = asyncio.create_task(body(job), name=job.id)
    running[job.id] = task
    try:
        async with asyncio.timeout(job.timeout):
            result = await task
    except TimeoutError:
        log(wname, job.id, "timed out after", job.timeout, "s")
        outcomes[job.id] = "timed out"
        dead_letters.put_nowait((job.id, "timeout"))
        return
    except asyncio.CancelledError:
        if asyncio.current_task().cancelling():
            log(wname, "cancelled while running", job.id)
            outcomes[job.id] = "cancelled by shutdown"
            raise
        log(wname, job.id, "was cancelled by control")
        outcomes[job.id] = "cancelled while running"
        return
    except JobError as e:
        if job.attempts < MAX_ATTEMPTS:
            delay = BACKOFF * 2 ** (job.attempts - 1)
            log(wname, e, "; retry in", delay, "s")
            retries[job.id] = loop.call_later(delay, requeue, job)
        else:
            log(wname, e, "; giving up")
            outcomes[job.id] = f"dead after {job.attempts} attempts"
            dead_letters.put_nowait((job.id, str(e)))
        return
    finally:
        del running[job.id]
    await persist(wname, job, result)


async def worker(i):
    wname = f"w{i}"
    while not stopping.is_set():
        try:
            _, _, jid = await queue.get()
        except asyncio.QueueShutDown:
            log(wname, "sees the queue shut down")
            break
        try:
            await run_job(wname, jobs[jid])
        finally:
            queue.task_done()
    log(wname, "exits")


async def alerter():
    while True:
        try:
            jid, why = await dead_letters.get()
        except asyncio.QueueShutDown:
            return
        log("ALERT: dead letter", jid, "-", why)


async def sleep_until(at):
    await asyncio.sleep(at - (asyncio.get_running_loop().time() - T0))


def cancel(jid):
    if jid not in jobs or jid in outcomes:
        log("control: no such job", jid)
        return
    cancel_requested.add(jid)
    if jid in running:
        log("control: cancels running", jid)
        running[jid].cancel()
    elif jid in retries:
        log("control: cancels the retry of", jid)
        retries.pop(jid).cancel()
        outcomes[jid] = "cancelled while waiting to retry"
    else:
        log("control: marks", jid, "cancelled")


async def control():
    for job in [
        Job("urgent-fix", 1, 0.28), Job("flaky", 3, 0.20, fails=2),
        Job("slow-export", 4, 2.4, timeout=1.2), Job("ingest-a", 5, 0.64),
        Job("ingest-b", 5, 1.0), Job("report-q1", 6, 1.6), Job("thumbs", 7, 0.4),
        Job("broken", 8, 0.30, fails=99),
    ]:
        submit(job, "control")
    script = [
        (0.72, lambda: cancel("thumbs")), (1.76, lambda: cancel("report-q1")),
        (1.92, lambda: cancel("nope")), (2.02, lambda: submit(Job("backfill", 2, 2.4, timeout=4.0), "control")),
        (3.46, lambda: submit(Job("late-report", 6, 0.68), "control")),
        (SHUTDOWN_AT, stopping.set),
    ]
    for when, action in script:
        await sleep_until(when)
        action()
    log("control: shutdown requested")


async def supervisor(workers):
    await stopping.wait()
    log("supervisor: stopping,", queue.qsize(), "queued, running", sorted(running))
    for cron in crons:
        cron.handle.cancel()
        log("supervisor: cron", cron.name, "stopped after", cron.runs, "runs")
    for jid in list(retries):
        retries.pop(jid).cancel()
        outcomes[jid] = "retry cancelled by shutdown"
        log("supervisor: cancels the retry of", jid)
    while not queue.empty():
        _, _, jid = queue.get_nowait()
        queue.task_done()
        abandoned.append(jid)
        outcomes.setdefault(jid, "abandoned in the queue")
    queue.shutdown()
    done, pending = await asyncio.wait(workers, timeout=GRACE)
    log("supervisor:", len(done), "workers done,", len(pending), "still busy after the grace period")
    for w in workers:
        if w in pending:
            w.cancel()
    if pending:
        await asyncio.wait(pending)
    if persisting:
        log("supervisor: waiting for", len(persisting), "save(s) in flight")
        versions = await asyncio.gather(*persisting)
        log("supervisor: in-flight saves done, versions", versions)
    dead_letters.shutdown()


async def main():
    global T0
    await asyncio.to_thread(store.open)  # the pool's thread is started before T0
    restart()
    loop = asyncio.get_running_loop()
    T0 = loop.time()
    for cron in crons:
        cron.arm(T0 + cron.first)
    async with asyncio.TaskGroup() as tg:
        workers = [tg.create_task(worker(i)) for i in range(WORKERS)]
        tg.create_task(alerter())
        tg.create_task(control())
        tg.create_task(supervisor(workers))
    log("report:")
    for jid, job in jobs.items():
        log(" ", jid, "attempts", job.attempts, "->", outcomes.get(jid, "?"))
    log("store: version", store.version, "rows", sorted((k, v[1]) for k, v in store.rows.items()))
    log("abandoned:", abandoned)


asyncio.run(main())
