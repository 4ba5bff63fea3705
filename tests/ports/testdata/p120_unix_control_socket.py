# A daemon's control socket, as services expose one: a Unix stream server
# at a path; each control command is one connection (the client writes
# the command, write_eof(), and reads the reply to EOF). The server
# started over a stale socket file left by a crashed run replaces it; a
# path that is a regular file is refused (OSError EADDRINUSE naming the
# path); a client connecting to a missing path gets FileNotFoundError,
# to a socket file nobody listens on ConnectionRefusedError. "stop"
# makes the daemon close its server, which in 3.13 removes the socket
# file (cleanup_socket); the stale file left unlinked by hand is not
# touched by anyone else.
import asyncio
import errno
import os
import socket
import tempfile

from probe import d, log, restart


def od(e):
    return f"{type(e).__name__}({errno.errorcode.get(e.errno, e.errno)})"


async def main():
    restart()
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "ctl.sock")
    # a crashed run left its socket file behind
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()
    log("stale socket file exists", os.path.exists(path))

    async def ctl(cmd, where=path):
        reader, writer = await asyncio.open_unix_connection(where)
        writer.write(cmd.encode())
        writer.write_eof()
        reply = await reader.read()
        writer.close()
        await writer.wait_closed()
        return reply.decode()

    try:
        await ctl("status")
    except OSError as e:
        log("ctl before start:", od(e))
    try:
        await ctl("status", os.path.join(tmp, "missing.sock"))
    except OSError as e:
        log("ctl to a missing path:", od(e))

    stop = asyncio.Event()
    state = {"reloads": 0, "served": 0}

    async def control(reader, writer):
        cmd = (await reader.read()).decode()
        state["served"] += 1
        if cmd == "status":
            reply = f"ok reloads={state['reloads']} sockname_is_path={writer.get_extra_info('sockname') == path}"
        elif cmd == "reload":
            await asyncio.sleep(0.1)
            state["reloads"] += 1
            reply = "reloaded"
        elif cmd == "stop":
            reply = "stopping"
            stop.set()
        else:
            reply = f"unknown command {cmd!r}"
        writer.write(reply.encode())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_unix_server(control, path)
    log("serving over the stale file", server.is_serving(), os.path.exists(path))

    blocker = os.path.join(tmp, "plain-file")
    open(blocker, "w").close()
    try:
        await asyncio.start_unix_server(control, blocker)
    except OSError as e:
        log("server on a regular file:", od(e), "names the path", blocker in str(e))

    log("status:", await ctl("status"))
    log("concurrent:", await asyncio.gather(ctl("reload"), ctl("status"), ctl("frobnicate")))
    log("status:", await ctl("status"))
    log("stop:", await ctl("stop"))
    await stop.wait()
    server.close()
    await server.wait_closed()
    log("closed, served", state["served"], "socket file exists", os.path.exists(path),
        "plain file exists", os.path.exists(blocker))
    try:
        await ctl("status")
    except OSError as e:
        log("ctl after stop:", od(e))
    os.remove(blocker)
    os.rmdir(tmp)


asyncio.run(main())
