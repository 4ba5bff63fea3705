# A line-based job server written as an asyncio.Protocol: data_received
# splits lines into a queue that a worker task drains slowly; when the
# queue holds MAX jobs the protocol pauses reading (is_reading() False)
# and the worker resumes it once the queue is down to one, so the client's
# lines sent meanwhile wait in the socket and come in one chunk. EOF from
# the client is answered after the last job; connection_lost ends the
# worker.
import asyncio

from probe import d, log, restart

MAX = 2


class JobServer(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.buf = b""
        self.jobs = asyncio.Queue()
        self.chunks = 0
        self.eof = False
        self.worker = asyncio.create_task(self.work())
        log("server: connection_made, reading", transport.is_reading())

    def data_received(self, data):
        self.chunks += 1
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        log("server: chunk", self.chunks, "with", len(lines), "lines")
        for line in lines:
            self.jobs.put_nowait(line.decode())
        if self.jobs.qsize() >= MAX and self.transport.is_reading():
            self.transport.pause_reading()
            log("server: paused at", self.jobs.qsize(), "jobs, reading", self.transport.is_reading())

    def eof_received(self):
        log("server: eof_received with", self.jobs.qsize(), "queued")
        self.eof = True
        self.jobs.put_nowait(None)
        return True

    def connection_lost(self, exc):
        log("server: connection_lost", d(exc))
        self.worker.cancel()

    async def work(self):
        done = 0
        while True:
            job = await self.jobs.get()
            if job is None:
                self.transport.write(f"done {done}\n".encode())
                self.transport.close()
                log("server: answered EOF after", done, "jobs")
                return
            await asyncio.sleep(0.1)
            done += 1
            self.transport.write(f"ok {job}\n".encode())
            if not self.transport.is_reading() and self.jobs.qsize() <= 1:
                self.transport.resume_reading()
                log("server: resumed at", self.jobs.qsize(), "jobs")


async def main():
    restart()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(JobServer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def read_all():
        while line := await reader.readline():
            log("client: got", line.decode().strip())

    rd = asyncio.create_task(read_all())
    for i, gap in enumerate([0.01, 0.03, 0.02, 0.05, 0.03, 0.02]):
        writer.write(f"job{i}\n".encode())
        await writer.drain()
        await asyncio.sleep(gap)
    writer.write(b"job6\njob7")
    await asyncio.sleep(0.03)
    writer.write(b"\n")
    writer.write_eof()
    log("client: all sent")
    await rd
    writer.close()
    await writer.wait_closed()
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
