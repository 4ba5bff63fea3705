"""Reference outputs for probe_qtg_diff_test.go, from CPython 3.13.

The committed files (python3 is CPython 3.13.0, PYENV_VERSION=3.13.0):

    python3 gen.py queue 11 100 > queue_ops.json
    python3 gen.py taskgroup 12 300 > taskgroup_ops.json
    python3 gen.py timeout 13 300 > timeout_ops.json
    python3 gen.py taskgroup-eager 14 150 > taskgroup_eager_ops.json
    python3 gen.py timeout-eager 15 200 > timeout_eager_ops.json
    python3 gen.py queue-eager 16 100 > queue_eager_ops.json
    CPYTHON_MAIN_TASKGROUPS=.../taskgroups.py python3 gen.py taskgroup-main 17 250 > taskgroup_main_ops.json
    CPYTHON_MAIN_TASKGROUPS=.../taskgroups.py python3 gen.py taskgroup-main-eager 18 250 > taskgroup_main_eager_ops.json
    python3 gen.py timeout-tasks 19 200 > timeout_tasks_ops.json
    python3 gen.py timeout-tasks-eager 20 200 > timeout_tasks_eager_ops.json

queue: random programs of blocking getters and putters, joiners, cancels,
put_nowait/get_nowait/task_done and shutdown(immediate) on a Queue,
LifoQueue or PriorityQueue of maxsize 0..3, yielding with sleep(0).
taskgroup: a task running a TaskGroup (optionally in, or around, a
timeout) whose children and body sleep, fail, swallow or convert their
cancellation, spawn siblings, or nest a TaskGroup, cancelled from outside
at given ticks. timeout: up to three nested timeout(), timeout_at() or
wait_for() levels (deadlines None, 0, negative or later, some rescheduled
by a timer, possibly after the scope ended) around a sleep that raises,
swallows or uncancels its cancellation, with outside cancels.

All run on a virtual clock. In the taskgroup and timeout programs timers
due together fire in scheduling order and a group's abort cancels its
children in creation order, as the Go loop and group do (CPython's heap
and set leave those orders unspecified).
"""
import asyncio, heapq, itertools, json, random, sys
from asyncio import events as _ev

# With a "-eager" suffix (queue-eager, taskgroup-eager, timeout-eager) the
# main or worker task installs eager_task_factory first, so the tasks it
# creates (getters and putters, children, wait_for(coro, 0)'s task) start
# eagerly: Go's WithEagerTasks loop.
EAGER = False

# taskgroup-main and taskgroup-main-eager run CPython main's TaskGroup
# (3.15 development: TaskGroup.cancel(), gh-135736, gh-155418, gh-155433),
# loaded from the file named by $CPYTHON_MAIN_TASKGROUPS (a copy of main's
# Lib/asyncio/taskgroups.py, not included here), and add children and
# bodies that call g.cancel().
MAIN = False

# timeout-tasks[-eager] adds wait_for levels given a task (wait_for(task, d))
# rather than a coroutine.
WAITFOR_TASKS = False


def use_main_taskgroup():
    import importlib.util, os
    # main's create_task records the awaited-by graph (3.14+): not needed.
    asyncio.futures.future_add_to_awaited_by = lambda *a: None
    asyncio.futures.future_discard_from_awaited_by = lambda *a: None
    spec = importlib.util.spec_from_file_location(
        "asyncio._main_taskgroups", os.environ["CPYTHON_MAIN_TASKGROUPS"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    orig_init = mod.TaskGroup.__init__
    def init(self):
        orig_init(self); self._tasks = _OrderedSet()  # see below
    mod.TaskGroup.__init__ = init
    asyncio.TaskGroup = mod.TaskGroup

class _VSel:
    def __init__(self, loop, sel): self.loop, self.sel = loop, sel
    def select(self, timeout=None):
        if timeout is None:
            raise RuntimeError("deadlock")
        self.loop._vt += timeout
        return self.sel.select(0)
    def __getattr__(self, n): return getattr(self.sel, n)
class VLoop(asyncio.SelectorEventLoop):
    def __init__(self):
        super().__init__()
        self._vt = 0.0
        self._selector = _VSel(self, self._selector)
    def time(self): return self._vt
def vrun(coro):
    return asyncio.run(coro, loop_factory=VLoop)

from asyncio import events as _ev
_seq = itertools.count()
class _FifoTimer(_ev.TimerHandle):
    __slots__ = ("_seq",)
    def __init__(self, *a, **k):
        super().__init__(*a, **k); self._seq = next(_seq)
    def __lt__(self, o): return (self._when, self._seq) < (o._when, o._seq)
class FifoVLoop(VLoop):
    """VLoop whose timers with equal deadlines fire in scheduling order (as the Go loop's)."""
    def call_at(self, when, callback, *args, context=None):
        self._check_closed()
        timer = _FifoTimer(when, callback, args, self, context)
        if timer._source_traceback: del timer._source_traceback[-1]
        heapq.heappush(self._scheduled, timer)
        timer._scheduled = True
        return timer


def gen(rng):
    ops = []
    n = rng.randint(10, 40)
    for _ in range(n):
        r = rng.random()
        if r < 0.18: ops.append(["getter"])
        elif r < 0.34: ops.append(["putter", rng.randint(0, 9)])
        elif r < 0.44: ops.append(["cancel", rng.randint(0, 12)])
        elif r < 0.54: ops.append(["put_nowait", rng.randint(0, 9)])
        elif r < 0.62: ops.append(["get_nowait"])
        elif r < 0.68: ops.append(["task_done"])
        elif r < 0.71: ops.append(["joiner"])
        elif r < 0.735: ops.append(["shutdown", rng.random() < 0.5])
        else: ops.append(["yield"])
    ops.append(["yield"]); ops.append(["yield"]); ops.append(["yield"])
    return ops

def ename(e):
    return type(e).__name__

async def run(kind, maxsize, ops):
    if EAGER:
        asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
    out = []
    q = {"Queue": asyncio.Queue, "LifoQueue": asyncio.LifoQueue, "PriorityQueue": asyncio.PriorityQueue}[kind](maxsize)
    tasks = []
    def st():
        return f"q={q.qsize()} f={int(q.full())} e={int(q.empty())} u={q._unfinished_tasks}"
    async def getter(i):
        try:
            v = await q.get(); out.append(f"T{i} got {v}")
        except BaseException as e:
            out.append(f"T{i} get {ename(e)}")
            if isinstance(e, asyncio.CancelledError): raise
    async def putter(i, v):
        try:
            await q.put(v); out.append(f"T{i} put {v}")
        except BaseException as e:
            out.append(f"T{i} put {ename(e)}")
            if isinstance(e, asyncio.CancelledError): raise
    async def joiner(i):
        try:
            await q.join(); out.append(f"T{i} joined")
        except BaseException as e:
            out.append(f"T{i} join {ename(e)}"); raise
    for op in ops:
        k = op[0]
        if k == "getter":
            tasks.append(asyncio.create_task(getter(len(tasks))))
        elif k == "putter":
            tasks.append(asyncio.create_task(putter(len(tasks), op[1])))
        elif k == "joiner":
            tasks.append(asyncio.create_task(joiner(len(tasks))))
        elif k == "cancel":
            if op[1] < len(tasks):
                out.append(f"cancel T{op[1]} {int(tasks[op[1]].cancel())}")
        elif k == "put_nowait":
            try: q.put_nowait(op[1]); out.append(f"put_nowait {op[1]} ok")
            except BaseException as e: out.append(f"put_nowait {op[1]} {ename(e)}")
        elif k == "get_nowait":
            try: out.append(f"get_nowait {q.get_nowait()}")
            except BaseException as e: out.append(f"get_nowait {ename(e)}")
        elif k == "task_done":
            try: q.task_done(); out.append("task_done ok")
            except BaseException as e: out.append(f"task_done {ename(e)}")
        elif k == "shutdown":
            q.shutdown(op[1]); out.append(f"shutdown {int(op[1])}")
        elif k == "yield":
            await asyncio.sleep(0)
            out.append("yield " + st() + f" g={len(q._getters)} p={len(q._putters)}")
    for t in tasks: t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    out.append("end " + st())
    return out



# A scenario: a worker task w runs [timeout(T)] around TaskGroup with children.
# child spec: [delay, action] action in ok|fail|conv|swallow|slowcancel
# body spec: [delay, action] action in ok|raise|catchraise
# outside: list of [tick, msg] cancels of w; timeout: None or [where, deadline] where in outer|inner
def gen_tg(rng):
    n = rng.randint(0, 4)
    acts = ["ok", "fail", "conv", "swallow", "slowcancel", "spawn", "swallowspawn"]
    if MAIN:
        acts += ["groupcancel", "groupcancel"]
    children = [[rng.randint(0, 4), rng.choice(acts)] for _ in range(n)]
    body_acts = ["ok", "ok", "raise", "catchraise", "swallow", "nested"]
    if MAIN:
        body_acts += ["groupcancel", "groupcancel"]
    body = [rng.randint(0, 5), rng.choice(body_acts)]
    if body[1] == "nested":
        body.append([[rng.randint(0, 4), rng.choice(acts)] for _ in range(rng.randint(1, 2))])
    outside = [[rng.randint(0, 5), f"ext{i}"] for i in range(rng.choice([0, 0, 1, 1, 2]))]
    tmo = None
    r = rng.random()
    if r < 0.3: tmo = ["outer", rng.randint(0, 5)]
    elif r < 0.6: tmo = ["inner", rng.randint(0, 5)]
    return {"children": children, "body": body, "outside": outside, "timeout": tmo}

def d(e):
    if e is None: return "nil"
    if isinstance(e, BaseExceptionGroup):
        return "EG(" + ",".join(d(x) for x in e.exceptions) + ")"
    if isinstance(e, asyncio.CancelledError): return f"CE({e.args[0] if e.args else ''})"
    if isinstance(e, TimeoutError): return "Timeout"
    return f"{type(e).__name__}({e.args[0] if e.args else ''})"

async def run_tg(sc):
    loop = asyncio.get_running_loop()
    out = []
    def log(s): out.append(f"{loop.time():g} {s}")
    async def child(i, delay, action, g):
        if action == "groupcancel" and delay == 0:
            log(f"c{i} cancels group at once"); g.cancel()
        try:
            await asyncio.sleep(delay)
            if action == "groupcancel":
                log(f"c{i} cancels group"); g.cancel()
            if action == "spawn":
                try:
                    g.create_task(child(f"{i}s", 1, "ok", g)); log(f"c{i} spawned")
                except RuntimeError as e:
                    log(f"c{i} spawn {e}")
        except asyncio.CancelledError:
            if action == "conv":
                log(f"c{i} conv"); raise KeyError(f"c{i}")
            if action == "swallow":
                log(f"c{i} swallow"); return
            if action == "swallowspawn":
                try:
                    g.create_task(child(f"{i}s", 1, "ok", g)); log(f"c{i} spawned")
                except RuntimeError as e:
                    log(f"c{i} spawn {e}")
                return
            if action == "slowcancel":
                log(f"c{i} slowcancel")
                await asyncio.sleep(1)
                log(f"c{i} slowcancel done")
            log(f"c{i} cancelled"); raise
        if action == "fail":
            log(f"c{i} fail"); raise ValueError(f"c{i}")
        log(f"c{i} ok")
    async def body_fn(g):
        for i, (dl, act) in enumerate(sc["children"]):
            g.create_task(child(i, dl, act, g))
        delay, action = sc["body"][:2]
        if action == "nested":
            try:
                async with asyncio.TaskGroup() as g2:
                    for i, (dl, act) in enumerate(sc["body"][2]):
                        g2.create_task(child(f"n{i}", dl, act, g2))
                    await asyncio.sleep(delay)
            except BaseException as e:
                log(f"nested {d(e)} c={asyncio.current_task().cancelling()}")
                raise
            log("nested done")
            return
        try:
            await asyncio.sleep(delay)
            if action == "groupcancel":
                log("body cancels group"); g.cancel()
                await asyncio.sleep(1)
        except asyncio.CancelledError as e:
            log(f"body {d(e)}")
            if action == "catchraise":
                raise OSError("body")
            if action == "swallow":
                await asyncio.sleep(1)
                log(f"body swallowed c={asyncio.current_task().cancelling()}")
                return
            raise
        if action == "raise":
            raise OSError("body")
        log("body done")
    async def tg():
        async with asyncio.TaskGroup() as g:
            tmo = sc["timeout"]
            if tmo and tmo[0] == "inner":
                try:
                    async with asyncio.timeout(tmo[1]) as cm:
                        await body_fn(g)
                finally:
                    log(f"inner tmo expired={int(cm.expired())}")
            else:
                await body_fn(g)
    async def w():
        if EAGER:
            asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
        me = asyncio.current_task()
        try:
            tmo = sc["timeout"]
            if tmo and tmo[0] == "outer":
                try:
                    async with asyncio.timeout(tmo[1]) as cm:
                        await tg()
                finally:
                    log(f"outer tmo expired={int(cm.expired())}")
            else:
                await tg()
            log(f"w result nil c={me.cancelling()}")
        except BaseException as e:
            log(f"w result {d(e)} c={me.cancelling()}")
        try:
            await asyncio.sleep(0)
            log("w next ok")
        except asyncio.CancelledError as e:
            log(f"w next {d(e)} c={me.cancelling()}")
            raise
    wt = asyncio.create_task(w())
    for tick, msg in sc["outside"]:
        loop.call_at(tick, wt.cancel, msg)
    try:
        await wt
        log(f"wt ok c={wt.cancelling()}")
    except BaseException as e:
        log(f"wt {d(e)} cancelled={int(wt.cancelled())} c={wt.cancelling()}")
    return out

# CPython keeps a group's tasks in a set, so an abort cancels them in an
# arbitrary order; the Go group cancels in creation order (TG-3). Make the
# reference deterministic: an insertion-ordered set.
class _OrderedSet(dict):
    def add(self, x): self[x] = None
    def discard(self, x): self.pop(x, None)
_orig_init = asyncio.TaskGroup.__init__
def _init(self):
    _orig_init(self); self._tasks = _OrderedSet()
asyncio.TaskGroup.__init__ = _init



def gen_tmo(rng):
    levels = []
    for _ in range(rng.randint(1, 3)):
        kinds = ["timeout", "timeout", "timeout_at", "waitfor"]
        if WAITFOR_TASKS:
            kinds += ["waitfor_task", "waitfor_task"]
        kind = rng.choice(kinds)
        dl = rng.choice([None, 0, -1, 1, 2, 3, 4])
        rs = None
        if not kind.startswith("waitfor") and rng.random() < 0.4:
            rs = [rng.randint(0, 4), rng.choice([None, 0, 1, 2, 3, 5])]
        levels.append([kind, dl, rs])
    return {"levels": levels, "sleep": rng.randint(0, 5), "action": rng.choice(["raise", "raise", "swallow", "uncancel"]),
            "outside": [[rng.randint(0, 5), f"ext{i}"] for i in range(rng.choice([0, 0, 1, 2]))]}

def d_tmo(e):
    if e is None: return "nil"
    if isinstance(e, asyncio.CancelledError): return f"CE({e.args[0] if e.args else ''})"
    if isinstance(e, TimeoutError): return "Timeout"
    return f"{type(e).__name__}({e.args[0] if e.args else ''})"

async def run_tmo(sc):
    loop = asyncio.get_running_loop()
    out = []
    def log(s): out.append(f"{loop.time():g} {s}")
    async def inner():
        me = asyncio.current_task()
        try:
            await asyncio.sleep(sc["sleep"])
            log("sleep done")
        except asyncio.CancelledError as e:
            log(f"inner {d_tmo(e)} c={me.cancelling()}")
            if sc["action"] == "swallow":
                await asyncio.sleep(1); log("swallowed"); return
            if sc["action"] == "uncancel":
                me.uncancel(); log(f"uncancelled c={me.cancelling()}"); return
            raise
    async def level(i):
        if i == len(sc["levels"]):
            return await inner()
        kind, dl, rs = sc["levels"][i]
        me = asyncio.current_task()
        cm = None
        try:
            if kind == "waitfor":
                await asyncio.wait_for(level(i + 1), dl)
            elif kind == "waitfor_task":
                await asyncio.wait_for(asyncio.ensure_future(level(i + 1)), dl)
            else:
                cm = asyncio.timeout(dl) if kind == "timeout" else asyncio.timeout_at(dl)
                async with cm:
                    if rs is not None:
                        def resched(cm=cm, new=rs[1]):
                            try:
                                cm.reschedule(new); log(f"L{i} resched {new} ok")
                            except RuntimeError as e:
                                log(f"L{i} resched {e}")
                        loop.call_at(rs[0], resched)
                    await level(i + 1)
            log(f"L{i} nil exp={int(cm.expired()) if cm else '-'} c={me.cancelling()}")
        except BaseException as e:
            log(f"L{i} {d_tmo(e)} exp={int(cm.expired()) if cm else '-'} c={me.cancelling()}")
            raise
    async def w():
        if EAGER:
            asyncio.get_running_loop().set_task_factory(asyncio.eager_task_factory)
        me = asyncio.current_task()
        try:
            await level(0)
        except BaseException as e:
            log(f"w got {d_tmo(e)}")
        try:
            await asyncio.sleep(0); log(f"w next ok c={me.cancelling()}")
        except asyncio.CancelledError as e:
            log(f"w next {d_tmo(e)} c={me.cancelling()}"); raise
    wt = asyncio.create_task(w())
    for tick, msg in sc["outside"]:
        loop.call_at(tick, wt.cancel, msg)
    try:
        await wt; log(f"wt ok c={wt.cancelling()}")
    except BaseException as e:
        log(f"wt {d_tmo(e)} cancelled={int(wt.cancelled())} c={wt.cancelling()}")
    return out


if __name__ == "__main__":
    what, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if what.endswith("-eager"):
        what, EAGER = what[:-len("-eager")], True
    if what == "timeout-tasks":
        what, WAITFOR_TASKS = "timeout", True
    if what == "taskgroup-main":
        what, MAIN = "taskgroup", True
        use_main_taskgroup()
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        if what == "queue":
            kind = rng.choice(["Queue", "LifoQueue", "PriorityQueue"])
            maxsize = rng.choice([0, 1, 2, 3])
            ops = gen(rng)
            out = asyncio.run(run(kind, maxsize, ops), loop_factory=VLoop)
            cases.append({"kind": kind, "maxsize": maxsize, "ops": ops, "out": out})
        elif what == "timeout":
            sc = gen_tmo(rng)
            sc["out"] = asyncio.run(run_tmo(sc), loop_factory=FifoVLoop)
            cases.append(sc)
        else:
            sc = gen_tg(rng)
            sc["out"] = asyncio.run(run_tg(sc), loop_factory=FifoVLoop)
            cases.append(sc)
    json.dump(cases, sys.stdout, separators=(",", ":"))
    print()
