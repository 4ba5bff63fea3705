# probe-streams-cpython.py writes aio/testdata/streams_cpython_trace.json:
# random programs over one asyncio.StreamReader (feed_data, feed_eof,
# set_exception, read/readexactly/readline/readuntil started as tasks,
# cancel, and feeds, EOFs and errors that race a cancellation) with what
# CPython 3.13 prints after each step: the tasks that finished and how,
# the buffer, eof, paused and whether a read waits, and the transport's
# pause_reading/resume_reading calls. aio's TestProbeStreams_CPythonTrace
# replays each program on aio.StreamReader and compares line for line.
#
# One documented difference is applied to CPython first (README, "Where
# Go differs"): a read(-1) that fails or is cancelled puts the blocks it
# took back at the front of the buffer instead of dropping them.
#
#	PYENV_VERSION=3.13.0 python3 scripts/probe-streams-cpython.py 2026 120 \
#	    > aio/testdata/streams_cpython_trace.json
import asyncio, json, random, sys
from asyncio import IncompleteReadError, LimitOverrunError

def rep(b): return repr(bytes(b))

class FT:
    def __init__(s, log): s.log=log
    def pause_reading(s): s.log.append("pause")
    def resume_reading(s): s.log.append("resume")

def outcome(t, r):
    if t.cancelled(): return "CancelledError"
    e = t.exception()
    if e is None: return rep(t.result())
    if isinstance(e, IncompleteReadError): return f"IRE {rep(e.partial)} {e.expected}"
    if isinstance(e, LimitOverrunError): return f"LOE {e.args[0]} {e.consumed}"
    return f"{type(e).__name__} {e}"


_orig_read = asyncio.StreamReader.read
async def _go_read(self, n=-1):
    if self._exception is not None:
        raise self._exception
    if n < 0:
        blocks = []
        while True:
            try:
                block = await _orig_read(self, self._limit)
            except BaseException:
                if blocks:
                    self._buffer[:0] = b"".join(blocks)
                    if self._transport is not None and not self._paused and len(self._buffer) > 2 * self._limit:
                        self._transport.pause_reading(); self._paused = True
                raise
            if not block:
                return b"".join(blocks)
            blocks.append(block)
    return await _orig_read(self, n)
asyncio.StreamReader.read = _go_read

SEPS = [["\n"], ["ab"], ["b\n"], ["aab"], ["a", "b\n"], ["\n", "ba", "aaa"], ["abab"]]

async def run(script):
    log = []
    r = asyncio.StreamReader(limit=script["limit"])
    r.set_transport(FT(log))
    tasks = []
    reported = set()
    for i, op in enumerate(script["ops"]):
        k = op[0]
        if k == "feed":
            r.feed_data(op[1].encode())
        elif k == "eof":
            r.feed_eof()
        elif k == "exc":
            r.set_exception(ValueError("E"))
        elif k == "cancel":
            for t in reversed(tasks):
                if not t.done():
                    t.cancel(); break
        elif k == "feedcancel":
            r.feed_data(op[1].encode())
            for t in reversed(tasks):
                if not t.done():
                    t.cancel(); break
        elif k == "cancelfeed":
            for t in reversed(tasks):
                if not t.done():
                    t.cancel(); break
            r.feed_data(op[1].encode())
        elif k == "feedexc":
            r.feed_data(op[1].encode())
            r.set_exception(ValueError("E"))
        elif k == "eofcancel":
            r.feed_eof()
            for t in reversed(tasks):
                if not t.done():
                    t.cancel(); break
        elif k == "start":
            kind = op[1]
            if kind == "read": c = r.read(op[2])
            elif kind == "readexactly": c = r.readexactly(op[2])
            elif kind == "readline": c = r.readline()
            elif kind == "readuntil":
                seps = [s.encode() for s in op[2]]
                c = r.readuntil(tuple(seps) if len(seps) > 1 else seps[0])
            tasks.append(asyncio.create_task(c))
        for _ in range(4):
            await asyncio.sleep(0)
        for j, t in enumerate(tasks):
            if t.done() and j not in reported:
                reported.add(j)
                log.append(f"t{j}: {outcome(t, r)}")
        log.append(f"{i} buf={rep(r._buffer)} eof={r._eof} paused={r._paused} waiter={r._waiter is not None}")
    for t in tasks:
        if not t.done(): t.cancel()
    await asyncio.sleep(0)
    return log

def gen(rng):
    limit = rng.choice([1, 2, 3, 4, 5, 8])
    ops = []
    eof = False
    for _ in range(rng.randint(3, 20)):
        x = rng.random()
        if x < 0.35 and not eof:
            ops.append(["feed", "".join(rng.choice("ab\n") for _ in range(rng.randint(1, 12)))])
        elif x < 0.38 and not eof:
            ops.append(["eof"]); eof = True
        elif x < 0.40 and not eof:
            ops.append(["eofcancel"]); eof = True
        elif x < 0.5 and not eof:
            ops.append([rng.choice(["feedcancel", "cancelfeed", "feedexc"]), "".join(rng.choice("ab\n") for _ in range(rng.randint(1, 12)))])
        elif x < 0.52:
            ops.append(["exc"])
        elif x < 0.58:
            ops.append(["cancel"])
        else:
            kind = rng.choice(["read", "readexactly", "readline", "readuntil"])
            if kind == "read": ops.append(["start", kind, rng.choice([-1, 0, 1, 2, 5, 20])])
            elif kind == "readexactly": ops.append(["start", kind, rng.choice([0, 1, 3, 7, 15])])
            elif kind == "readline": ops.append(["start", kind])
            else: ops.append(["start", kind, rng.choice(SEPS)])
    return {"limit": limit, "ops": ops}

def main():
    # argv: the seed and how many programs
    seed = int(sys.argv[1]); n = int(sys.argv[2])
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = gen(rng)
        s["out"] = asyncio.run(run(s))
        out.append(s)
    # one program a line, so that a diff names the program
    sys.stdout.write("[\n" + ",\n".join(json.dumps(c) for c in out) + "\n]\n")
main()
