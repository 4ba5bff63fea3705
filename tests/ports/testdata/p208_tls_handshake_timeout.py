# A TLS server with ssl_handshake_timeout: a plain TCP client that
# connects and says nothing is dropped when the timeout passes (it reads
# EOF then), the handler is never called and nothing is reported (the
# timeout is a ConnectionAbortedError, an OSError, logged only in debug
# mode); a TLS client connecting meanwhile is served at once.
import asyncio
import os
import ssl
import subprocess
import tempfile

from probe import log, restart


def contexts(tmp):
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return server, ssl.create_default_context(cafile=cert)


async def main():
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory() as tmp:
        server_ctx, client_ctx = contexts(tmp)
    reported = []
    loop.set_exception_handler(lambda loop, ctx: reported.append(ctx["message"]))
    handled = []

    async def hello(reader, writer):
        handled.append(1)
        writer.write(b"hello over TLS\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(hello, "127.0.0.1", 0, ssl=server_ctx, ssl_handshake_timeout=0.5)
    port = server.sockets[0].getsockname()[1]
    restart()
    silent_r, silent_w = await asyncio.open_connection("127.0.0.1", port)
    log("silent client connected")
    await asyncio.sleep(0.2)
    r, w = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    log("TLS client:", await r.readline(), "handler calls", len(handled))
    w.close()
    await w.wait_closed()
    log("silent client reads", await silent_r.read(), "at EOF", silent_r.at_eof())
    silent_w.close()
    await silent_w.wait_closed()
    await asyncio.sleep(0.1)
    log("handler calls", len(handled), "reported", reported)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
