# asyncio-stream.rst "Examples": the TCP echo server using streams
# (start_server, `async with server: await server.serve_forever()`), the
# TCP echo client using streams, and "Get HTTP headers" against a local
# server answering HEAD. 127.0.0.1 and port 0; no port number is printed
# (peername and sockname show the host only).
import asyncio
import urllib.parse

from probe import d, log, restart


async def handle_echo(reader, writer):
    data = await reader.read(100)
    message = data.decode()
    addr = writer.get_extra_info('peername')

    log(f"Received {message!r} from {addr[0]!r}")

    log(f"Send: {message!r}")
    writer.write(data)
    await writer.drain()

    log("Close the connection")
    writer.close()
    await writer.wait_closed()


async def tcp_echo_client(message, port):
    reader, writer = await asyncio.open_connection(
        '127.0.0.1', port)

    log(f'Send: {message!r}')
    writer.write(message.encode())
    await writer.drain()

    data = await reader.read(100)
    log(f'Received: {data.decode()!r}')

    log('Close the connection')
    writer.close()
    await writer.wait_closed()


async def serve(server):
    async with server:
        await server.serve_forever()


async def handle_head(reader, writer):
    request = await reader.readuntil(b"\r\n\r\n")
    log("server got", request.split(b"\r\n")[0].decode())
    writer.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n")
    await writer.drain()
    writer.close()
    await writer.wait_closed()


async def print_http_headers(url):
    url = urllib.parse.urlsplit(url)
    reader, writer = await asyncio.open_connection(
        url.hostname, url.port)

    query = (
        f"HEAD {url.path or '/'} HTTP/1.0\r\n"
        f"Host: {url.hostname}\r\n"
        f"\r\n"
    )

    writer.write(query.encode('latin-1'))
    while True:
        line = await reader.readline()
        if not line:
            break

        line = line.decode('latin1').rstrip()
        if line:
            log(f'HTTP header> {line}')

    # Ignore the body, close the socket
    writer.close()
    await writer.wait_closed()


async def main():
    restart()
    server = await asyncio.start_server(
        handle_echo, '127.0.0.1', 0)

    addrs = ', '.join(str(sock.getsockname()[0]) for sock in server.sockets)
    log(f'Serving on {addrs}')
    port = server.sockets[0].getsockname()[1]

    serving = asyncio.create_task(serve(server))
    await tcp_echo_client('Hello World!', port)
    serving.cancel()
    try:
        await serving
    except asyncio.CancelledError as e:
        log("serve_forever", d(e), "serving", server.is_serving())

    restart()
    server = await asyncio.start_server(handle_head, '127.0.0.1', 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        await print_http_headers(f"http://127.0.0.1:{port}/index.html")
    log("closed, serving", server.is_serving())


asyncio.run(main())
