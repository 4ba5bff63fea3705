# A TLS echo server (start_server with ssl=, a self-signed certificate for
# localhost made for the test) and its clients: a client that names the
# wrong host in server_hostname fails its handshake with
# SSLCertVerificationError (a hostname mismatch) while the server's
# handler is never called and nothing reaches the loop's exception
# handler (not in debug mode); a client naming localhost is echoed line by
# line, sees the server's certificate, and both sides close cleanly.
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

    async def echo(reader, writer):
        handled.append(writer.get_extra_info("ssl_object") is not None)
        lines = 0
        while line := await reader.readline():
            lines += 1
            writer.write(b"echo: " + line)
            await writer.drain()
        log("server: client EOF after", lines, "lines")
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="wrong.example")
    except ssl.SSLCertVerificationError as e:
        restart()
        log("wrong-host client:", type(e).__name__, e.verify_message.split(",")[0])
    await asyncio.sleep(0.1)
    log("handler calls", len(handled), "reported", reported)

    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    restart()
    log("client: connected over TLS", writer.get_extra_info("ssl_object") is not None)
    for i, word in enumerate(("alpha", "beta", "gamma")):
        await asyncio.sleep(0.1 * (i + 1))
        writer.write(word.encode() + b"\n")
        log("client:", await reader.readline())
    log("client: can_write_eof", writer.can_write_eof())
    writer.close()
    await writer.wait_closed()
    await asyncio.sleep(0.1)
    restart()
    log("client closed; handler calls", len(handled), "over TLS", handled, "reported", reported)
    server.close()
    await server.wait_closed()
    log("done")


asyncio.run(main())
