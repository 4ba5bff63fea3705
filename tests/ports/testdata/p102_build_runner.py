# A parallel build runner: each step is a shell command run under a
# Semaphore(2), its stderr merged into its stdout (stderr=STDOUT) and
# collected with communicate(); a failing step keeps its exit status; the
# summary is in step order, whatever order the steps finished in. A
# deploy step that hangs is killed when its time budget runs out
# (wait_for on communicate, then kill() and wait()) and reports -9 (it
# runs alone: on the Go port's virtual clock a timer pending while other
# children run would fire before they finish). Then a step fed a
# large input through communicate(input) -- far more than a pipe holds --
# reports the byte count its child read, and a watcher process stopped
# with terminate() reports -15.
import asyncio

from probe import log, restart

STEPS = [
    ("compile", "echo compiling; echo 'warning: unused x' >&2; echo done"),
    ("lint", "echo 'lint: 2 problems' >&2; exit 3"),
    ("test", "printf 'ok 1\\nok 2\\n'"),
]


async def main():
    restart()
    sem = asyncio.Semaphore(2)
    started = []

    async def run_step(name, cmd, budget=None):
        async with sem:
            started.append(name)
            proc = await asyncio.create_subprocess_shell(
                cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            try:
                out, _ = await asyncio.wait_for(proc.communicate(), budget)
            except TimeoutError:
                log(name, "timed out, killing")
                proc.kill()
                rc = await proc.wait()
                return name, rc, ["(timed out)"]
            return name, proc.returncode, out.decode().splitlines()

    results = await asyncio.gather(*(run_step(n, c) for n, c in STEPS))
    log("start order", started)
    for name, rc, lines in results:
        log(f"{name:8} rc={rc}", lines)
    failed = [name for name, rc, _ in results if rc != 0]
    log("failed steps", failed)
    name, rc, lines = await run_step("deploy", "echo started; exec sleep 30", 0.5)
    log(name, "rc", rc, lines)

    data = b"x" * 300_000
    proc = await asyncio.create_subprocess_exec(
        "wc", "-c", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    out, err = await proc.communicate(data)
    log("wc read", out.decode().strip(), "rc", proc.returncode, "stderr", err)

    watcher = await asyncio.create_subprocess_exec(
        "sh", "-c", "echo watching; exec sleep 30", stdout=asyncio.subprocess.PIPE)
    line = await watcher.stdout.readline()
    log("watcher says", line, "returncode", watcher.returncode)
    watcher.terminate()
    log("watcher stopped", await watcher.wait())


asyncio.run(main())
