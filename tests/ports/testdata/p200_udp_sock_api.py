# A UDP echo service written on loop.sock_* (3.11+): the server answers
# each datagram with sock_recvfrom and sock_sendto, the client sends with
# sock_sendto and reads replies with sock_recvfrom and sock_recvfrom_into
# a bytearray (a reply longer than the buffer is cut to it). A
# sock_recvfrom given up by wait_for leaves the socket usable. Then a
# connected datagram endpoint (remote_addr) to a port nobody listens on:
# the ICMP port unreachable comes back as ConnectionRefusedError through
# error_received, and the endpoint stays open for the next send.
import asyncio
import socket

from probe import d, log, restart


class Refused(asyncio.DatagramProtocol):
    def __init__(self, done):
        self.done = done

    def connection_made(self, transport):
        log("endpoint: connected, peer is remote", transport.get_extra_info("peername") is not None)

    def datagram_received(self, data, addr):
        log("endpoint: got", data)

    def error_received(self, exc):
        log("endpoint: error_received", type(exc).__name__)
        if not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc):
        log("endpoint: connection_lost", exc)


async def main():
    loop = asyncio.get_running_loop()
    restart()
    srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    srv.bind(("127.0.0.1", 0))
    srv.setblocking(False)
    port = srv.getsockname()[1]

    async def serve():
        n = 0
        while True:
            data, addr = await loop.sock_recvfrom(srv, 100)
            n += 1
            log("server: got", data, "from 127.0.0.1:", addr[0] == "127.0.0.1")
            if data == b"stop":
                await loop.sock_sendto(srv, b"bye", addr)
                return n
            await asyncio.sleep(0.1 * n)
            await loop.sock_sendto(srv, data.upper() * 2, addr)

    server = asyncio.create_task(serve())
    cli = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    cli.bind(("127.0.0.1", 0))
    cli.setblocking(False)
    sent = await loop.sock_sendto(cli, b"ping", ("127.0.0.1", port))
    log("client: sent", sent, "bytes")
    data, addr = await loop.sock_recvfrom(cli, 100)
    log("client: reply", data, "from server:", addr[1] == port)
    await loop.sock_sendto(cli, b"abcdef", ("127.0.0.1", port))
    buf = bytearray(5)
    n, addr = await loop.sock_recvfrom_into(cli, buf)
    log("client: recvfrom_into", n, bytes(buf[:n]))
    try:
        await asyncio.wait_for(loop.sock_recvfrom(cli, 100), 0.2)
    except TimeoutError:
        log("client: nothing more yet")
    await loop.sock_sendto(cli, b"stop", ("127.0.0.1", port))
    data, _ = await loop.sock_recvfrom(cli, 100)
    log("client: then", data)
    log("server handled", await server)
    cli.close()
    srv.close()

    gone = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    gone.bind(("127.0.0.1", 0))
    gone_port = gone.getsockname()[1]
    gone.close()
    done = loop.create_future()
    transport, _ = await loop.create_datagram_endpoint(
        lambda: Refused(done), remote_addr=("127.0.0.1", gone_port))
    transport.sendto(b"anyone?")
    await asyncio.wait_for(done, 1)
    log("after the refusal, closing:", transport.is_closing())
    await asyncio.sleep(0.2)
    transport.sendto(b"still?")
    await asyncio.sleep(0.1)
    transport.close()
    await asyncio.sleep(0)
    log("done")


asyncio.run(main())
