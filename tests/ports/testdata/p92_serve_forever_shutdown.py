# Shutting down a Protocol server that runs serve_forever() (3.13): the
# server starts with start_serving=False and serve_forever() starts it. A
# task waiting in wait_closed() from the start is released only when the
# server is closed and its last connection is gone. Closing the server
# from outside cancels serve_forever(), which then waits for the
# connections itself before ending cancelled; a second serve_forever()
# meanwhile is refused (the server is closed). One client leaves by
# itself, close_clients() closes the one that stays, with what it just
# sent still unread (a reset: the client's read fails), abort_clients() on a second server drops a client's unsent
# data; cancelling serve_forever() while it waits for the connections
# ends it at once.
import asyncio
import socket

from probe import d, log, restart


class Echo(asyncio.Protocol):
    def __init__(self, tag):
        self.tag = tag

    def connection_made(self, tr):
        self.tr = tr
        log(self.tag, "server: connection_made")

    def data_received(self, data):
        if data.startswith(b"big"):
            self.tr.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32768)
            self.tr.write(b"y" * 393216)
            log(self.tag, "server: wrote big, buffered", self.tr.get_write_buffer_size() > 0)
        else:
            self.tr.write(data.upper())

    def eof_received(self):
        log(self.tag, "server: eof_received")

    def connection_lost(self, exc):
        log(self.tag, "server: connection_lost", d(exc) if exc else None, "buffered", self.tr.get_write_buffer_size())


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Echo("s1"), "127.0.0.1", 0, start_serving=False)
    port = server.sockets[0].getsockname()[1]
    restart()
    log("created: serving", server.is_serving(), "sockets", len(server.sockets))

    async def waiter(name):
        await server.wait_closed()
        log(name, "wait_closed returned")

    early = asyncio.create_task(waiter("early"))
    forever = asyncio.create_task(server.serve_forever())
    await asyncio.sleep(0)
    log("serve_forever started: serving", server.is_serving())

    r1, w1 = await asyncio.open_connection("127.0.0.1", port)
    r2, w2 = await asyncio.open_connection("127.0.0.1", port)
    w1.write(b"one")
    w2.write(b"two")
    log("clients got", await r1.read(10), await r2.read(10))
    await asyncio.sleep(0.1)

    server.close()
    log("closed: serving", server.is_serving(), "sockets", server.sockets)
    await asyncio.sleep(0.1)
    log("forever done", forever.done(), "early done", early.done())
    try:
        await server.serve_forever()
    except RuntimeError as e:
        log("second serve_forever:", d(e).replace(repr(server), "<Server>"))
    late = asyncio.create_task(waiter("late"))

    w1.close()
    await w1.wait_closed()
    await asyncio.sleep(0.1)
    log("c1 gone: forever done", forever.done(), "early done", early.done())

    w2.write(b"last words")
    await asyncio.sleep(0)
    server.close_clients()
    try:
        log("c2 reads", await r2.read(), "at_eof", r2.at_eof())
    except ConnectionError as e:
        log("c2 read:", d(e), "at_eof", r2.at_eof())
    try:
        await forever
    except asyncio.CancelledError:
        log("serve_forever ended cancelled", forever.cancelled())
    await asyncio.gather(early, late)
    await server.wait_closed()
    log("wait_closed again returns at once")
    w2.close()
    try:
        await w2.wait_closed()
    except ConnectionError as e:
        log("c2 wait_closed:", d(e))

    await asyncio.sleep(0.1)
    restart()
    s2 = await loop.create_server(lambda: Echo("s2"), "127.0.0.1", 0)
    forever = asyncio.create_task(s2.serve_forever())
    r3, w3 = await asyncio.open_connection("127.0.0.1", s2.sockets[0].getsockname()[1])
    w3.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    w3.transport.pause_reading()
    w3.write(b"big")
    await asyncio.sleep(0.1)
    forever.cancel()
    await asyncio.sleep(0.1)
    log("cancelled: forever done", forever.done(), "serving", s2.is_serving())
    forever.cancel()
    try:
        await forever
    except asyncio.CancelledError:
        log("second cancel ends serve_forever, clients still open", not w3.is_closing())
    s2.abort_clients()
    await asyncio.sleep(0.1)
    w3.transport.resume_reading()
    data = await r3.read()
    log("c3 got all", len(data) == 393216, "some", len(data) > 0, "at_eof", r3.at_eof())
    w3.close()
    await w3.wait_closed()
    await s2.wait_closed()
    log("done")


asyncio.run(main())
