# A TLS client pointed at a plain-text server: the server reads the
# ClientHello as bytes (a TLS handshake record, first byte 0x16), answers
# in plain text and closes; the client's handshake fails with an SSLError
# (not a certificate error) from open_connection. Then a plain client on
# the same server gets its answer.
import asyncio
import os
import ssl
import subprocess
import tempfile

from probe import log, restart


def client_context(tmp):
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return ssl.create_default_context(cafile=cert)


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        client_ctx = client_context(tmp)

    async def plain(reader, writer):
        data = await reader.read(5)
        log("server: first bytes start with", hex(data[0]) if data else None)
        writer.write(b"HTTP/1.0 400 Bad Request\r\n\r\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        log("server: closed")

    server = await asyncio.start_server(plain, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    try:
        await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    except ssl.SSLCertVerificationError as e:
        log("TLS client: certificate error", e)
    except ssl.SSLError as e:
        log("TLS client:", type(e).__name__)
    await asyncio.sleep(0.1)
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET / HTTP/1.0\r\n\r\n")
    log("plain client:", await r.readline())
    w.close()
    await w.wait_closed()
    await asyncio.sleep(0.1)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
