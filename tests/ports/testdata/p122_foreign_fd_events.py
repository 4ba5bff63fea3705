# Wiring a foreign event source into the loop with add_reader, as bindings
# of C libraries do: the library signals on one end of a socketpair, the
# loop's reader callback drains the other end and resolves the futures
# that wait for those events. A worker thread (to_thread) signals while
# the loop waits; add_reader on an fd that already has a reader replaces
# its callback; a reader callback that raises is reported to the
# exception handler and stays registered (the next event reaches it);
# remove_reader is True once, then False, and bytes sent after it wait in
# the socket; add_writer runs its callback once the socket is writable,
# and the callback removes itself.
import asyncio
import socket

from probe import d, log, restart


async def main():
    loop = asyncio.get_running_loop()
    restart()
    reports = []
    loop.set_exception_handler(lambda lp, ctx: reports.append(
        (ctx["message"].split(" ")[0] + " " + ctx["message"].split(" ")[1], d(ctx.get("exception")))))
    rsock, wsock = socket.socketpair()
    rsock.setblocking(False)
    received = bytearray()
    waiters = []

    def wait_for_bytes(n):
        fut = loop.create_future()
        waiters.append((n, fut))
        return fut

    def on_readable():
        received.extend(rsock.recv(100))
        for n, fut in list(waiters):
            if len(received) >= n and not fut.done():
                fut.set_result(bytes(received[:n]))
                waiters.remove((n, fut))

    loop.add_reader(rsock, on_readable)

    def library_thread():
        for b in (b"a", b"b", b"c"):
            wsock.send(b)
        return "signalled"

    fut = wait_for_bytes(3)
    log("thread:", await asyncio.to_thread(library_thread))
    log("events", await fut)

    calls = []

    def replacement():
        calls.append("replacement")
        rsock.recv(100)

    loop.add_reader(rsock, replacement)
    wsock.send(b"x")
    await asyncio.sleep(0.001)
    log("after replacing the reader", calls)

    state = {"n": 0}

    def flaky():
        data = rsock.recv(100)
        state["n"] += 1
        if state["n"] == 1:
            raise ValueError(f"bad event {data!r}")
        calls.append(f"flaky got {data!r}")

    loop.add_reader(rsock, flaky)
    wsock.send(b"1")
    await asyncio.sleep(0.001)
    wsock.send(b"2")
    await asyncio.sleep(0.001)
    log("reports", reports, "calls", calls)

    log("remove_reader", loop.remove_reader(rsock), loop.remove_reader(rsock))
    wsock.send(b"unseen")
    await asyncio.sleep(0.001)
    log("left in the socket", rsock.recv(100), "calls", len(calls))

    def writable():
        calls.append("writable")
        log("writer callback, remove_writer", loop.remove_writer(wsock))

    wsock.setblocking(False)
    loop.add_writer(wsock, writable)
    await asyncio.sleep(0.001)
    log("calls", calls[-1:], "remove_writer again", loop.remove_writer(wsock))
    rsock.close()
    wsock.close()


asyncio.run(main())
