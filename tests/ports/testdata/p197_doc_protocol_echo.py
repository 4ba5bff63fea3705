# asyncio-protocol.rst "Examples": the TCP echo server and client
# protocols, then the UDP echo server and client protocols, each pair in
# one program (the server serving in a task while the client runs).
# 127.0.0.1 and port 0; addresses are printed by host only. The docs' UDP
# protocols are plain classes: closing the server's transport then fails
# in connection_lost (AttributeError, logged by the loop), so here they
# subclass asyncio.DatagramProtocol.
import asyncio

from probe import d, log, restart


class EchoServerProtocol(asyncio.Protocol):
    def connection_made(self, transport):
        peername = transport.get_extra_info('peername')
        log('Connection from {}'.format(peername[0]))
        self.transport = transport

    def data_received(self, data):
        message = data.decode()
        log('Data received: {!r}'.format(message))

        log('Send: {!r}'.format(message))
        self.transport.write(data)

        log('Close the client socket')
        self.transport.close()


class EchoClientProtocol(asyncio.Protocol):
    def __init__(self, message, on_con_lost):
        self.message = message
        self.on_con_lost = on_con_lost

    def connection_made(self, transport):
        transport.write(self.message.encode())
        log('Data sent: {!r}'.format(self.message))

    def data_received(self, data):
        log('Data received: {!r}'.format(data.decode()))

    def connection_lost(self, exc):
        log('The server closed the connection')
        self.on_con_lost.set_result(True)


async def tcp_client(port):
    # Get a reference to the event loop as we plan to use
    # low-level APIs.
    loop = asyncio.get_running_loop()

    on_con_lost = loop.create_future()
    message = 'Hello World!'

    transport, protocol = await loop.create_connection(
        lambda: EchoClientProtocol(message, on_con_lost),
        '127.0.0.1', port)

    # Wait until the protocol signals that the connection
    # is lost and close the transport.
    try:
        await on_con_lost
    finally:
        transport.close()


async def tcp_main():
    # Get a reference to the event loop as we plan to use
    # low-level APIs.
    loop = asyncio.get_running_loop()

    server = await loop.create_server(
        lambda: EchoServerProtocol(),
        '127.0.0.1', 0)
    port = server.sockets[0].getsockname()[1]

    async def serve():
        async with server:
            await server.serve_forever()

    serving = asyncio.create_task(serve())
    await tcp_client(port)
    serving.cancel()
    try:
        await serving
    except asyncio.CancelledError as e:
        log("server", d(e), "serving", server.is_serving())


class EchoUDPServerProtocol(asyncio.DatagramProtocol):
    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        message = data.decode()
        log('Received %r from %s' % (message, addr[0]))
        log('Send %r to %s' % (message, addr[0]))
        self.transport.sendto(data, addr)


class EchoUDPClientProtocol(asyncio.DatagramProtocol):
    def __init__(self, message, on_con_lost):
        self.message = message
        self.on_con_lost = on_con_lost
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        log('Send:', self.message)
        self.transport.sendto(self.message.encode())

    def datagram_received(self, data, addr):
        log("Received:", data.decode())

        log("Close the socket")
        self.transport.close()

    def error_received(self, exc):
        log('Error received:', exc)

    def connection_lost(self, exc):
        log("Connection closed")
        self.on_con_lost.set_result(True)


async def udp_server(started):
    log("Starting UDP server")

    # Get a reference to the event loop as we plan to use
    # low-level APIs.
    loop = asyncio.get_running_loop()

    # One protocol instance will be created to serve all
    # client requests.
    transport, protocol = await loop.create_datagram_endpoint(
        lambda: EchoUDPServerProtocol(),
        local_addr=('127.0.0.1', 0))
    started.set_result(transport.get_extra_info('sockname')[1])

    try:
        await asyncio.sleep(3600)  # Serve for 1 hour.
    finally:
        transport.close()


async def udp_client(port):
    # Get a reference to the event loop as we plan to use
    # low-level APIs.
    loop = asyncio.get_running_loop()

    on_con_lost = loop.create_future()
    message = "Hello World!"

    transport, protocol = await loop.create_datagram_endpoint(
        lambda: EchoUDPClientProtocol(message, on_con_lost),
        remote_addr=('127.0.0.1', port))

    try:
        await on_con_lost
    finally:
        transport.close()


async def main():
    restart()
    await tcp_main()

    restart()
    started = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(udp_server(started))
    port = await started
    await udp_client(port)
    server.cancel()
    try:
        await server
    except asyncio.CancelledError as e:
        log("UDP server", d(e))

asyncio.run(main())
