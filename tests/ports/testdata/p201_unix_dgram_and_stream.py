# Unix-domain sockets both ways. A Unix datagram "syslog" endpoint bound
# to a path takes lines from a client endpoint bound to its own path
# (connected to the server's with remote_addr) and from an unbound
# sender, whose address the server sees as None; it answers the bound
# one only. Then a Unix stream server (create_unix_server through
# start_unix_server) answers a request per connection made with
# open_unix_connection; closing the server removes its socket file, the
# datagram endpoints leave theirs, and a stale one at the server path is
# replaced when a new endpoint binds there.
import asyncio
import os
import socket
import tempfile

from probe import log, restart


class Syslog(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        who = "None" if addr is None else os.path.basename(addr)
        log("syslog: got", data, "from", who)
        if addr is not None:
            self.transport.sendto(b"ack " + data, addr)


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.acks = asyncio.Queue()

    def datagram_received(self, data, addr):
        self.acks.put_nowait((data, os.path.basename(addr)))

    def connection_lost(self, exc):
        log("client endpoint lost", exc)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    d = tempfile.mkdtemp()
    spath = os.path.join(d, "syslog.sock")
    cpath = os.path.join(d, "client.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    stale.bind(spath)
    stale.close()
    log("stale file there:", os.path.exists(spath))
    st, _ = await loop.create_datagram_endpoint(Syslog, local_addr=spath, family=socket.AF_UNIX)
    log("syslog bound at", os.path.basename(st.get_extra_info("sockname")))
    ct, cp = await loop.create_datagram_endpoint(
        Client, local_addr=cpath, remote_addr=spath, family=socket.AF_UNIX)
    ct.sendto(b"hello")
    log("client: ack", await cp.acks.get())
    anon, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, remote_addr=spath, family=socket.AF_UNIX)
    anon.sendto(b"anonymous")
    await asyncio.sleep(0.1)
    ct.sendto(b"again")
    log("client: ack", await cp.acks.get())
    anon.close()
    ct.close()
    st.close()
    await asyncio.sleep(0)
    log("datagram files left:", sorted(os.listdir(d)))

    upath = os.path.join(d, "ctl.sock")
    conns = 0

    async def handle(reader, writer):
        nonlocal conns
        conns += 1
        line = await reader.readline()
        await asyncio.sleep(0.1 * conns)
        writer.write(line.upper())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_unix_server(handle, upath)
    log("server listening, file there:", os.path.exists(upath))
    for cmd in (b"status\n", b"reload\n"):
        reader, writer = await asyncio.open_unix_connection(upath)
        writer.write(cmd)
        log("client got", await reader.readline(), "then", await reader.read())
        writer.close()
        await writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("server closed, file there:", os.path.exists(upath))
    try:
        await asyncio.open_unix_connection(upath)
    except FileNotFoundError as e:
        log("connect after close:", type(e).__name__)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    os.rmdir(d)
    log("done")


asyncio.run(main())
