# The subprocess patterns of a build or CI tool: a filter child fed and
# read line by line, communicate() with input and both streams, stderr
# merged into stdout, a wait with a timeout followed by kill, a streaming
# child terminated after its first line, programs that cannot start, a
# cancelled communicate() (the child keeps running until killed), and a
# write to a child that has exited.
import asyncio
import signal
from asyncio.subprocess import PIPE, STDOUT

from probe import d, log, restart


async def main():
    p = await asyncio.create_subprocess_exec("cat", stdin=PIPE, stdout=PIPE)
    restart()  # (the times printed leave out how long a child takes to start)
    log("cat running", p.returncode)
    for line in (b"one\n", b"two\n"):
        p.stdin.write(line)
        await p.stdin.drain()
        log("cat echoed", await p.stdout.readline())
    p.stdin.close()
    await p.stdin.wait_closed()
    log("cat rest", await p.stdout.read(), "exit", await p.wait())

    p = await asyncio.create_subprocess_shell(
        "read x; echo out:$x; echo err:$x >&2; exit 3", stdin=PIPE, stdout=PIPE, stderr=PIPE)
    restart()
    out, err = await p.communicate(b"hi\n")
    log("communicate", out, err, p.returncode)

    p = await asyncio.create_subprocess_shell("echo a; echo b >&2", stdout=PIPE, stderr=STDOUT)
    restart()
    out, err = await p.communicate()
    log("merged", sorted(out.split()), err)

    p = await asyncio.create_subprocess_exec("sleep", "10")
    restart()
    try:
        await asyncio.wait_for(p.wait(), 0.1)
    except TimeoutError as e:
        log("wait_for", d(e), "returncode", p.returncode)
    p.kill()
    log("killed", await p.wait(), p.returncode == -signal.SIGKILL)

    p = await asyncio.create_subprocess_exec("sh", "-c", "echo ready; exec sleep 10", stdout=PIPE)
    restart()
    log("first line", await p.stdout.readline())
    p.terminate()
    log("after terminate", await p.stdout.read(), await p.wait(), p.returncode == -signal.SIGTERM)

    for prog in ("no-such-program-p70", "/etc/passwd"):
        try:
            await asyncio.create_subprocess_exec(prog)
        except OSError as e:
            log(prog, type(e).__name__)

    p = await asyncio.create_subprocess_exec("sleep", "10", stdout=PIPE)
    restart()
    t = asyncio.create_task(p.communicate())
    await asyncio.sleep(0.1)
    t.cancel("give up")
    try:
        await t
    except asyncio.CancelledError as e:
        log("communicate", d(e), "returncode", p.returncode)
    p.kill()
    log("reaped", await p.wait())

    p = await asyncio.create_subprocess_exec("true", stdin=PIPE)
    restart()
    log("true exited", await p.wait())
    p.stdin.write(b"x" * 100000)
    try:
        await p.stdin.drain()
        log("drain ok")
    except (BrokenPipeError, ConnectionResetError) as e:
        log("drain", d(e))
    log("done")


asyncio.run(main())
