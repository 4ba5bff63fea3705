# A mail-style service with STARTTLS and a TLS-only port, as SMTP/IMAP
# servers write it: the plaintext session refuses AUTH until the client
# has issued STARTTLS; both sides then upgrade the same connection with
# StreamWriter.start_tls() (3.11+), and the session goes on over TLS with
# the same reader and writer. A client whose context does not trust the
# server's certificate fails in open_connection(ssl=...) and the TLS
# port's handler is never called for it. A trusted client's close() is a
# TLS shutdown: the server's readline() sees EOF and the client's
# wait_closed() returns once the server has closed its side too. Then the
# TLS port closes its clients with close_clients(), which in 3.13 closes
# the sockets below TLS: the server's handler sees EOF before the client.
import asyncio
import os
import ssl
import subprocess
import tempfile

from probe import d, log, restart

events = []


def contexts(tmp):
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    return server, ssl.create_default_context(cafile=cert), ssl.create_default_context()


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        server_ctx, client_ctx, untrusting_ctx = contexts(tmp)

    async def mail(reader, writer):
        writer.write(b"220 ready\n")
        tls = False
        while line := await reader.readline():
            cmd = line.decode().strip()
            if cmd == "STARTTLS":
                writer.write(b"220 go ahead\n")
                await writer.drain()
                await writer.start_tls(server_ctx)
                tls = True
                log("server: upgraded, ssl_object", writer.get_extra_info("ssl_object") is not None)
            elif cmd.startswith("AUTH"):
                writer.write(b"235 ok\n" if tls else b"530 must issue STARTTLS first\n")
            elif cmd == "QUIT":
                writer.write(b"221 bye\n")
                break
        log("server: session ends, tls", tls)
        writer.close()
        await writer.wait_closed()

    async def tls_only(reader, writer):
        events.append("handler")
        log("server: TLS client, can_write_eof", writer.can_write_eof())
        while line := await reader.readline():
            writer.write(b"pong " + line)
        log("server: TLS client EOF")
        writer.close()
        await writer.wait_closed()
        log("server: TLS client closed")

    restart()
    mail_srv = await asyncio.start_server(mail, "127.0.0.1", 0)
    tls_srv = await asyncio.start_server(tls_only, "127.0.0.1", 0, ssl=server_ctx)

    reader, writer = await asyncio.open_connection("127.0.0.1", mail_srv.sockets[0].getsockname()[1])

    async def say(line):
        if line:
            writer.write(line.encode() + b"\n")
        reply = await reader.readline()
        log("client:", line or "(connect)", "->", reply)

    await say("")
    await say("AUTH secret")
    await say("STARTTLS")
    await writer.start_tls(client_ctx, server_hostname="localhost")
    restart()  # a handshake takes real time in CPython; none on the port's virtual clock
    log("client: upgraded, ssl_object", writer.get_extra_info("ssl_object") is not None)
    await say("AUTH secret")
    await say("QUIT")
    log("client: then", await reader.read())
    writer.close()
    await writer.wait_closed()
    log("client: mail session closed")

    port = tls_srv.sockets[0].getsockname()[1]
    try:
        await asyncio.open_connection("127.0.0.1", port, ssl=untrusting_ctx, server_hostname="localhost")
    except ssl.SSLCertVerificationError:
        log("untrusting client: certificate verify failed")
    restart()
    await asyncio.sleep(0.1)
    log("handler calls so far", len(events))
    restart()

    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    for word in ("a", "b"):
        writer.write(word.encode() + b"\n")
        log("client: TLS", await reader.readline())
    writer.close()
    log("client: closing", writer.is_closing())
    await writer.wait_closed()
    log("client: TLS wait_closed returned")
    await asyncio.sleep(0.1)

    # maintenance: the TLS port closes its clients (3.13's close_clients
    # closes the sockets below TLS: the handler hears of it first)
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_ctx, server_hostname="localhost")
    restart()
    await asyncio.sleep(0.1)
    tls_srv.close()
    tls_srv.close_clients()
    log("client: after close_clients", await reader.readline(), "at_eof", reader.at_eof())
    writer.close()
    await writer.wait_closed()
    log("client: closed")
    for srv in (mail_srv, tls_srv):
        srv.close()
        await srv.wait_closed()
    log("servers closed, handler calls", len(events))


asyncio.run(main())
