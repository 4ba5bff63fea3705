# Protocols on both ends of a line service (no streams). The server's
# eof_received() returns True: the connection stays half-open while it
# answers after the client's EOF, then it closes a little later. A
# "pause" line stops its reading: what the client sends meanwhile, and its
# EOF, come only after resume_reading(). The client protocols return
# False from eof_received() (their transport closes itself). Then the
# server's two ways out with unsent data in its buffer, to a client that
# does not read yet: close() flushes it all before connection_lost,
# abort() drops it and connection_lost comes at once. Last, a client that
# aborts with the server's data unread in its socket resets the
# connection: the server's connection_lost gets ConnectionResetError.
import asyncio
import socket

from probe import d, log, restart

BIG = 384 * 1024


class Server(asyncio.Protocol):
    def connection_made(self, tr):
        self.tr, self.buf, self.n = tr, b"", 0
        peer, me = tr.get_extra_info("peername"), tr.get_extra_info("sockname")
        log("server: connection_made from", peer[0], "on our port", me[1] == PORT, "is_closing", tr.is_closing())

    def data_received(self, data):
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            self.n += 1
            if line == b"pause":
                self.tr.pause_reading()
                log("server: paused, is_reading", self.tr.is_reading())
                asyncio.get_running_loop().call_later(0.2, self.resume)
            elif line in (b"close", b"abort"):
                self.tr.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
                self.tr.write(b"y" * BIG)
                log("server:", line, "with buffered data", self.tr.get_write_buffer_size() > 0)
                if line == b"close":
                    self.tr.close()
                else:
                    self.tr.abort()
                log("server: is_closing", self.tr.is_closing(), "is_reading", self.tr.is_reading())
            elif line == b"flood":
                self.tr.write(b"x" * 1000)
            else:
                self.tr.write(b"%d:%s\n" % (self.n, line))

    def resume(self):
        log("server: resume_reading, partial", self.buf)
        self.tr.resume_reading()

    def eof_received(self):
        log("server: eof_received, partial", self.buf, "is_closing", self.tr.is_closing())
        self.tr.write(b"bye after %d lines\n" % self.n)
        asyncio.get_running_loop().call_later(0.1, self.tr.close)
        return True

    def connection_lost(self, exc):
        log("server: connection_lost", d(exc) if exc else None, "is_closing", self.tr.is_closing())


class Client(asyncio.Protocol):
    def __init__(self, name):
        self.name, self.got = name, b""
        self.lost = asyncio.get_running_loop().create_future()

    def connection_made(self, tr):
        self.tr = tr

    def data_received(self, data):
        self.got += data

    def eof_received(self):
        if len(self.got) > 100:
            log(self.name, "eof_received, got all", len(self.got) == BIG, "some", len(self.got) > 0)
        else:
            log(self.name, "eof_received, got", self.got)
        return False

    def connection_lost(self, exc):
        log(self.name, "connection_lost", d(exc) if exc else None)
        self.lost.set_result(None)


async def main():
    global PORT
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Server, "127.0.0.1", 0)
    PORT = server.sockets[0].getsockname()[1]
    restart()

    tr, cp = await loop.create_connection(lambda: Client("a"), "127.0.0.1", PORT)
    tr.write(b"one\ntwo\npause\n")
    await asyncio.sleep(0.1)
    tr.write(b"three\nfour")
    tr.write_eof()
    log("a: wrote EOF, is_closing", tr.is_closing(), "can_write_eof", tr.can_write_eof())
    await cp.lost
    log("a: is_closing", tr.is_closing())

    for how in ("close", "abort"):
        await asyncio.sleep(0.1)
        restart()
        tr, cp = await loop.create_connection(lambda: Client(how), "127.0.0.1", PORT)
        tr.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        tr.pause_reading()
        tr.write(how.encode() + b"\n")
        await asyncio.sleep(0.2)
        log(how, ": resumes reading")
        tr.resume_reading()
        await cp.lost
        restart()  # the transfer takes real time on loopback

    await asyncio.sleep(0.1)
    tr, cp = await loop.create_connection(lambda: Client("rude"), "127.0.0.1", PORT)
    tr.pause_reading()
    tr.write(b"flood\n")
    await asyncio.sleep(0.1)
    log("rude: aborts with unread data")
    tr.abort()
    await cp.lost
    await asyncio.sleep(0.1)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
