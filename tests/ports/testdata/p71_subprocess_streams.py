# A supervisor's view of children: stdout and stderr read line by line by
# two tasks of a TaskGroup while the child runs, a megabyte through
# communicate() (more than a pipe holds), a line longer than the stream
# limit, a child killed by a signal it sends itself, stdin from DEVNULL,
# and signals sent once the child is reaped and its transport finished
# (ProcessLookupError).
import asyncio
import signal
from asyncio.subprocess import DEVNULL, PIPE

from probe import d, log, restart


async def lines(name, stream, got):
    while line := await stream.readline():
        got.append((name, line.decode().strip()))


async def main():
    p = await asyncio.create_subprocess_shell(
        "for i in 1 2 3; do echo out$i; echo err$i >&2; done; exit 7", stdout=PIPE, stderr=PIPE)
    restart()
    got = []
    async with asyncio.TaskGroup() as tg:
        tg.create_task(lines("out", p.stdout, got))
        tg.create_task(lines("err", p.stderr, got))
    log("streams", sorted(got), "exit", await p.wait())

    p = await asyncio.create_subprocess_exec("cat", stdin=PIPE, stdout=PIPE)
    restart()
    out, err = await p.communicate(b"0123456789abcdef" * 65536)
    log("cat", len(out), out[:4], out[-4:], err, p.returncode)

    p = await asyncio.create_subprocess_shell("printf '%0200d\\nshort\\n' 0", stdout=PIPE, limit=100)
    restart()
    try:
        await p.stdout.readline()
    except ValueError as e:
        log("long line", d(e))
    log("next", await p.stdout.readline(), await p.wait())

    p = await asyncio.create_subprocess_shell("kill -9 $$", stdout=PIPE)
    restart()
    log("self-kill", await p.stdout.read(), await p.wait(), p.returncode == -signal.SIGKILL)

    p = await asyncio.create_subprocess_exec("cat", stdin=DEVNULL, stdout=PIPE)
    restart()
    log("devnull", p.stdin, await p.stdout.read(), await p.wait())
    await asyncio.sleep(0)  # the transport finishes (connection_lost) after wait() returns

    for name, op in (("kill", p.kill), ("terminate", p.terminate), ("send_signal", lambda: p.send_signal(signal.SIGINT))):
        try:
            op()
            log(name, "ok")
        except ProcessLookupError as e:
            log(name, type(e).__name__)
    log("done")


asyncio.run(main())
