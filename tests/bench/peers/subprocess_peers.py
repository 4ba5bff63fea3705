"""Subprocess workloads of go-asyncio's tests/bench, in asyncio and uvloop.

    /usr/bin/python3 subprocess_peers.py asyncio|uvloop spawn|cat [-n N] [--mib M]

spawn: spawn and wait for N `true` processes, at most 100 at a time
       (a Semaphore), stdio inherited. Prints ns per process.
cat:   M MiB through `cat` with Process.communicate(). Prints MB/s.

Each measurement runs --runs times (default 3) in the one process and the
median run is reported, as tests/bench does for go-asyncio.

One JSON line per run, in the schema of tests/bench (impl, workload,
n, ns_per_op or mb_per_s). Run with Debian's /usr/bin/python3, which has
uvloop from python3-uvloop.
"""
import argparse
import asyncio
import json
import sys
import time


async def spawn(n, limit=100):
    sem = asyncio.Semaphore(limit)

    async def one():
        async with sem:
            p = await asyncio.create_subprocess_exec("true")
            rc = await p.wait()
            if rc != 0:
                raise RuntimeError(f"true exited {rc}")

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    return time.perf_counter() - t0


async def cat(mib):
    data = bytes(range(256)) * (mib * 4096)
    p = await asyncio.create_subprocess_exec(
        "cat", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    t0 = time.perf_counter()
    out, _ = await p.communicate(data)
    el = time.perf_counter() - t0
    if out != data:
        raise RuntimeError(f"cat returned {len(out)} bytes, want {len(data)}")
    return el


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("impl", choices=["asyncio", "uvloop"])
    ap.add_argument("workload", choices=["spawn", "cat"])
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if a.impl == "uvloop":
        import uvloop
        runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    else:
        runner = asyncio.Runner()
    with runner:
        if a.workload == "spawn":
            el = sorted(runner.run(spawn(a.n)) for _ in range(a.runs))[a.runs // 2]
            rec = {"impl": a.impl, "workload": "spawn", "n": a.n, "limit": 100,
                   "runs": a.runs, "ns_per_op": round(el / a.n * 1e9, 1)}
        else:
            el = sorted(runner.run(cat(a.mib)) for _ in range(a.runs))[a.runs // 2]
            rec = {"impl": a.impl, "workload": "cat", "mib": a.mib, "runs": a.runs,
                   "mb_per_s": round(a.mib * (1 << 20) / el / 1e6, 1)}
    rec["python"] = sys.version.split()[0]
    print(json.dumps(rec))


if __name__ == "__main__":
    main()
