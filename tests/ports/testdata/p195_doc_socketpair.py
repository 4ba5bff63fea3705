# The docs' three socketpair programs: asyncio-eventloop.rst "Watch a
# file descriptor for read events" (add_reader on a new_event_loop),
# asyncio-stream.rst "Register an open socket to wait for data using
# streams" (open_connection(sock=rsock)) and asyncio-protocol.rst
# "Connecting Existing Sockets" (create_connection(sock=rsock) with a
# protocol). wsock.send is called from call_soon, as the docs do.
import asyncio
from socket import socketpair
import socket

from probe import log, restart

# Create a pair of connected file descriptors
rsock, wsock = socketpair()

loop = asyncio.new_event_loop()


def reader():
    data = rsock.recv(100)
    log("Received:", data.decode())

    # We are done: unregister the file descriptor
    loop.remove_reader(rsock)

    # Stop the event loop
    loop.stop()


def start():
    restart()
    log("started")
    # Simulate the reception of data from the network
    loop.call_soon(wsock.send, 'abc'.encode())

# Register the file descriptor for read event
loop.add_reader(rsock, reader)

loop.call_soon(start)

try:
    # Run the event loop
    loop.run_forever()
finally:
    # We are done. Close sockets and the event loop.
    rsock.close()
    wsock.close()
    loop.close()


async def wait_for_data():
    # Get a reference to the current event loop because
    # we want to access low-level APIs.
    loop = asyncio.get_running_loop()
    restart()

    # Create a pair of connected sockets.
    rsock, wsock = socket.socketpair()

    # Register the open socket to wait for data.
    reader, writer = await asyncio.open_connection(sock=rsock)

    # Simulate the reception of data from the network
    loop.call_soon(wsock.send, 'abc'.encode())

    # Wait for data
    data = await reader.read(100)

    # Got data, we are done: close the socket
    log("Received:", data.decode())
    writer.close()
    await writer.wait_closed()

    # Close the second socket
    wsock.close()

asyncio.run(wait_for_data())


class MyProtocol(asyncio.Protocol):

    def __init__(self, on_con_lost):
        self.transport = None
        self.on_con_lost = on_con_lost

    def connection_made(self, transport):
        self.transport = transport
        log("connection_made")

    def data_received(self, data):
        log("Received:", data.decode())

        # We are done: close the transport;
        # connection_lost() will be called automatically.
        self.transport.close()

    def connection_lost(self, exc):
        log("connection_lost", exc)
        # The socket has been closed
        self.on_con_lost.set_result(True)


async def main():
    # Get a reference to the event loop as we plan to use
    # low-level APIs.
    loop = asyncio.get_running_loop()
    restart()

    # Create a pair of connected sockets
    rsock, wsock = socket.socketpair()

    # Register the socket to wait for data.
    on_con_lost = loop.create_future()
    transport, protocol = await loop.create_connection(
        lambda: MyProtocol(on_con_lost), sock=rsock)

    # Simulate the reception of data from the network.
    loop.call_soon(wsock.send, 'abc'.encode())

    try:
        await protocol.on_con_lost
    finally:
        transport.close()
        wsock.close()
    log("done")

asyncio.run(main())
