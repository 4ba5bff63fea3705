# A Protocol-based server (not streams) with flow control both ways: on
# "PAUSE" it stops reading for a while (what the client sends meanwhile
# arrives in one data_received at resume_reading); on "BIG n" it writes n
# bytes to a client that is not reading, past its high-water mark, so
# pause_writing() comes, and resume_writing() once the client reads. On
# EOF it returns False from eof_received: the transport closes itself.
import asyncio
import socket

from probe import d, log, restart


class Upper(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.buf = b""
        transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
        transport.set_write_buffer_limits(high=16384)
        log("proto: connection_made, limits", transport.get_write_buffer_limits())

    def data_received(self, data):
        self.buf += data
        lines = self.buf.split(b"\n")
        self.buf = lines.pop()
        log("proto: data_received", len(lines), "lines")
        for line in lines:
            cmd, _, arg = line.partition(b" ")
            if cmd == b"PAUSE":
                self.transport.pause_reading()
                log("proto: paused, is_reading", self.transport.is_reading())
                asyncio.get_running_loop().call_later(0.3, self.resume)
            elif cmd == b"BIG":
                self.transport.write(b"y" * int(arg))
                log("proto: wrote", int(arg), "bytes")
            else:
                self.transport.write(line.upper() + b"\n")

    def resume(self):
        log("proto: resume_reading")
        self.transport.resume_reading()

    def pause_writing(self):
        log("proto: pause_writing, buffered > high", self.transport.get_write_buffer_size() > 16384)

    def resume_writing(self):
        log("proto: resume_writing, buffered <= low", self.transport.get_write_buffer_size() <= 4096)

    def eof_received(self):
        log("proto: eof_received, partial", self.buf)
        return False

    def connection_lost(self, exc):
        log("proto: connection_lost", d(exc) if exc else None)
        lost.set()


async def main():
    global lost
    lost = asyncio.Event()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Upper, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"hello\n")
    log("client got", await reader.readline())
    await asyncio.sleep(0.1)
    writer.write(b"PAUSE\n")
    for word in (b"a", b"b"):
        await asyncio.sleep(0.1)
        writer.write(word + b"\n")
        log("client sent", word)
    log("client got", await reader.readline(), await reader.readline())
    await asyncio.sleep(0.1)
    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    writer.transport.pause_reading()
    writer.write(b"BIG 393216\n")
    await asyncio.sleep(0.2)
    restart()
    log("client resumes reading")
    writer.transport.resume_reading()
    big = await reader.readexactly(393216)
    restart()  # the transfer takes real time on loopback
    log("client got", len(big), "bytes")
    await asyncio.sleep(0.1)
    writer.write(b"unfinished")
    writer.write_eof()
    log("client got", await reader.read(), "at_eof", reader.at_eof())
    await lost.wait()
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()


asyncio.run(main())
