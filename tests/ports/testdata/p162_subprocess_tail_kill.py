# A supervisor streaming a child's stdout line by line: the child prints a
# header and three records then hangs; the reader takes the lines the
# child announces at once, then gives each further line 0.2 s (wait_for
# around readline), and when the child goes quiet it is killed;
# wait() then reports -SIGKILL, the rest of stdout is empty, and stderr
# (merged into a pipe of its own) holds what the child said there. A
# second child that exits by itself with status 3 is read to EOF.
import asyncio
import signal
from asyncio.subprocess import PIPE

from probe import d, log, restart

SCRIPT = "echo header; echo rec1; echo rec2 >&2; echo rec3; echo rec4; exec sleep 30"


async def stream(proc, name, announced, per_line=0.2):
    lines = []
    while True:
        try:
            if len(lines) < announced:
                line = await proc.stdout.readline()
            else:
                line = await asyncio.wait_for(proc.stdout.readline(), per_line)
        except TimeoutError:
            log(name, "quiet for", per_line, "s after", len(lines), "lines")
            return lines, False
        if not line:
            log(name, "EOF after", len(lines), "lines")
            return lines, True
        lines.append(line.decode().strip())


async def main():
    restart()
    proc = await asyncio.create_subprocess_exec("sh", "-c", SCRIPT, stdout=PIPE, stderr=PIPE)
    lines, eof = await stream(proc, "hanger", 4)
    log("lines", lines, "eof", eof, "returncode", proc.returncode)
    proc.kill()
    rc = await proc.wait()
    log("killed: wait", rc, "is -SIGKILL", rc == -signal.SIGKILL)
    rest = await proc.stdout.read()
    err = await proc.stderr.read()
    log("rest", rest, "stderr", err)
    try:
        proc.kill()
        log("second kill: no error")
    except ProcessLookupError as e:
        log("second kill:", type(e).__name__)

    proc2 = await asyncio.create_subprocess_exec("sh", "-c", "echo one; echo two; exit 3", stdout=PIPE)
    lines, eof = await stream(proc2, "quitter", 3)
    rc = await proc2.wait()
    log("lines", lines, "eof", eof, "wait", rc)


asyncio.run(main())
