# A log tailer on loop.subprocess_exec with a SubprocessProtocol of its
# own: it splits each pipe's data into lines, and its line parser raises
# on a malformed line (the rest of that chunk is lost: the child writes
# its output in one write) -- the exception is reported to the loop's
# exception handler (an exception in a callback, with its handle) and the
# tailer goes on; process_exited resolves a future with the exit status;
# connection_lost comes last. The program prints what each pipe carried,
# the reports, and the order of the end callbacks that does not vary
# (connection_lost last). Then a child killed by a signal while the
# tailer waits: returncode -9, get_returncode() on the transport too.
import asyncio

from probe import d, log, restart

reports = []


def handler(loop, ctx):
    msg = ctx["message"]
    if msg.startswith("Exception in callback"):
        msg = "Exception in callback"
    reports.append(f"{msg} {d(ctx.get('exception'))} {'handle' if 'handle' in ctx else '-'}")


class Tail(asyncio.SubprocessProtocol):
    def __init__(self, exited):
        self.exited = exited
        self.lines = {1: [], 2: []}
        self.partial = {1: b"", 2: b""}
        self.events = []

    def pipe_data_received(self, fd, data):
        buf = self.partial[fd] + data
        *complete, self.partial[fd] = buf.split(b"\n")
        for line in complete:
            if line.startswith(b"bad"):
                raise ValueError(line.decode())
            self.lines[fd].append(line.decode())

    def pipe_connection_lost(self, fd, exc):
        self.events.append(f"pipe {fd} closed")

    def process_exited(self):
        self.events.append("exited")
        self.exited.set_result(self.transport.get_returncode())

    def connection_made(self, transport):
        self.transport = transport

    def connection_lost(self, exc):
        self.events.append("lost")


async def main():
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(handler)
    restart()
    exited = loop.create_future()
    script = "printf 'one\\nbad line\\ntwo\\ntail'; echo warn >&2; exit 2"
    tr, proto = await loop.subprocess_exec(lambda: Tail(exited), "sh", "-c", script, stdin=None)
    rc = await exited
    while "lost" not in proto.events:
        await asyncio.sleep(0)
    log("exit status", rc, "transport says", tr.get_returncode())
    log("stdout lines", proto.lines[1], "partial", proto.partial[1])
    log("stderr lines", proto.lines[2])
    log("reports", reports)
    log("last event", proto.events[-1], "pipes closed", sorted(e for e in proto.events if e.startswith("pipe")))
    tr.close()

    exited = loop.create_future()
    tr, proto = await loop.subprocess_exec(lambda: Tail(exited), "sleep", "30", stdin=None)
    log("sleeper running", tr.get_returncode())
    tr.kill()
    rc = await exited
    log("sleeper killed", rc, tr.get_returncode())
    tr.close()


asyncio.run(main())
