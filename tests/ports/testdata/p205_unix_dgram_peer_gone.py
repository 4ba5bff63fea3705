# A Unix datagram client whose server goes away. The client endpoint is
# bound to its own path and connected (remote_addr) to the server's; the
# server answers two requests, then closes. The server's socket file is
# left behind, so the client's next send is refused (ConnectionRefusedError
# through error_received); once the stale file is removed the send fails
# the same way with what the kernel says then; the endpoint stays open
# through both. A send after the client's own close is dropped without a word.
import asyncio
import errno
import os
import socket
import tempfile

from probe import log, restart


class Server(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        log("server: got", data)
        self.transport.sendto(data[::-1], addr)

    def connection_lost(self, exc):
        log("server: lost", exc)


class Client(asyncio.DatagramProtocol):
    def __init__(self):
        self.replies = asyncio.Queue()

    def datagram_received(self, data, addr):
        self.replies.put_nowait(data)

    def error_received(self, exc):
        log("client: error_received", type(exc).__name__, errno.errorcode[exc.errno])

    def connection_lost(self, exc):
        log("client: lost", exc)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    d = tempfile.mkdtemp()
    spath, cpath = os.path.join(d, "srv"), os.path.join(d, "cli")
    st, _ = await loop.create_datagram_endpoint(Server, local_addr=spath, family=socket.AF_UNIX)
    ct, cp = await loop.create_datagram_endpoint(
        Client, local_addr=cpath, remote_addr=spath, family=socket.AF_UNIX)
    for word in (b"stressed", b"drawer"):
        await asyncio.sleep(0.1)
        ct.sendto(word)
        log("client: reply", await cp.replies.get())
    st.close()
    await asyncio.sleep(0.1)
    log("server file left:", os.path.exists(spath))
    ct.sendto(b"hello?")
    await asyncio.sleep(0.1)
    os.remove(spath)
    ct.sendto(b"anyone?")
    await asyncio.sleep(0.1)
    log("client closing:", ct.is_closing())
    ct.close()
    await asyncio.sleep(0)
    ct.sendto(b"after close")
    await asyncio.sleep(0.1)
    log("replies left", cp.replies.qsize())
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    os.rmdir(d)
    log("done")


asyncio.run(main())
