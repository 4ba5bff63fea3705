# A shell-like pipeline built from create_subprocess_exec: the first
# child's stdout is an os.pipe whose read end is the second child's stdin
# (the parent closes its copies), the last child's stdout is read with
# `async for line`; a three-stage pipeline ends when its source does; a
# source writing for ever dies of SIGPIPE when its sink is done; a sink
# is killed on a deadline once it has answered; children run
# concurrently under a semaphore with env and cwd; a child stopped by a
# signal it does not handle reports -signum; communicate(input) drops the
# input of a child without a stdin pipe. (SIGALRM rather than SIGINT:
# a shell without job control starts background jobs with SIGINT
# ignored, and the children would inherit that.)
import asyncio
import os
import signal
import tempfile
from asyncio.subprocess import DEVNULL, PIPE

from probe import d, log, restart


async def pipeline(*argvs, last_stdout=PIPE):
    procs = []
    prev = None
    for i, argv in enumerate(argvs):
        last = i == len(argvs) - 1
        if last:
            out_w, nxt = last_stdout, None
        else:
            nxt, out_w = os.pipe()
        p = await asyncio.create_subprocess_exec(
            *argv, stdin=prev if prev is not None else DEVNULL, stdout=out_w)
        if prev is not None:
            os.close(prev)
        if not last:
            os.close(out_w)
        prev = nxt
        procs.append(p)
    return procs


async def main():
    restart()
    procs = await pipeline(["printf", "pear\\napple\\nfig\\napple\\npear\\n"], ["sort"], ["uniq", "-c"])
    lines = []
    async for line in procs[-1].stdout:
        lines.append(line.split())
    codes = [await p.wait() for p in procs]
    log("counted", lines, "codes", codes)

    procs = await pipeline(["printf", "b\\na\\n"], ["tr", "a-z", "A-Z"])
    out, err = await procs[-1].communicate()
    log("upper", out, err, [await p.wait() for p in procs])

    # the source writes for ever; the sink stops after its first line
    procs = await pipeline(["yes", "spam"], ["head", "-n", "2"])
    out, _ = await procs[-1].communicate()
    codes = [await p.wait() for p in procs]
    log("head", out, "codes", codes, codes[0] == -signal.SIGPIPE)

    # a sink that never finishes: killed when the deadline passes
    restart()
    procs = await pipeline(["printf", "x\\n"], ["sh", "-c", "read line; echo got $line; exec sleep 10"])
    log("sink said", await procs[-1].stdout.readline())
    try:
        async with asyncio.timeout(0.2):
            out, _ = await procs[-1].communicate()
    except TimeoutError as e:
        log("slow sink", d(e), "returncode", procs[-1].returncode)
        procs[-1].kill()
    log("sink", await procs[-1].wait(), "source", await procs[0].wait())

    # concurrent children under a semaphore, each with its env and cwd
    sem = asyncio.Semaphore(2)
    running = 0
    peak = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a", "b", "c"):
            os.mkdir(os.path.join(tmp, name))

        async def job(name):
            nonlocal running, peak
            async with sem:
                running += 1
                peak = max(peak, running)
                p = await asyncio.create_subprocess_exec(
                    "sh", "-c", 'echo "$JOB $(basename "$PWD")"; exit $CODE',
                    stdout=PIPE, cwd=os.path.join(tmp, name),
                    env={"JOB": "job-" + name, "CODE": str(ord(name) - 97), "PATH": os.environ["PATH"]})
                out, _ = await p.communicate()
                running -= 1
                return out.decode().strip(), p.returncode

        results = await asyncio.gather(*(job(n) for n in ("a", "b", "c")))
    print("jobs", results, "peak", peak)  # (no time: starting children takes real time)

    # signals a child does not handle
    restart()
    for sig in (signal.SIGALRM, signal.SIGUSR1, signal.SIGTERM):
        p = await asyncio.create_subprocess_exec("sleep", "10")
        restart()  # (the times printed leave out how long a child takes to start)
        p.send_signal(sig)
        rc = await p.wait()
        log("sleep got", sig.name, "returncode", rc, rc == -sig)
    p = await asyncio.create_subprocess_exec("sh", "-c", "trap 'exit 7' USR1; echo armed; while :; do sleep 0.01; done", stdout=PIPE)
    restart()
    log("child", (await p.stdout.readline()).strip())
    p.send_signal(signal.SIGUSR1)
    log("trapping child returncode", await p.wait())

    # a helper that always hands its input to communicate(), whether the
    # child has a stdin pipe or not: without one the input is dropped
    async def run_tool(argv, input=None, stdin=DEVNULL):
        p = await asyncio.create_subprocess_exec(*argv, stdin=stdin, stdout=PIPE)
        restart()
        out, err = await p.communicate(input)
        return out, err, p.returncode

    log("tool with a stdin pipe", await run_tool(["tr", "a-z", "A-Z"], b"abc\n", stdin=PIPE))
    log("tool without one", await run_tool(["echo", "hi"], b"dropped\n"))


asyncio.run(main())
