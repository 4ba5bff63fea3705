//go:build unix

package aio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// A TLS handshake that fails (the peer speaks plain HTTP) or times out
// (a silent peer, on the virtual clock) has closed the
// socket by the time the call returns its error, for ConnectAcceptedSocket
// (the server's end) and StartTLS (the client's); it was closed one loop
// iteration later. A failed StartTLS's protocol hears ConnectionLost
// with the error after the call returned, as before. CPython 3.13
// (PYENV_VERSION=3.13.0): SSLProtocol._fatal_error schedules the
// transport's _call_connection_lost (which closes the socket) before it
// wakes the waiter, so
//
//	await loop.connect_accepted_socket(P, a, ssl=sctx)  # SSLError HTTP_REQUEST
//	a.fileno()                                          # -1: closed
//
// and create_connection(ssl=...) against a plain server leaves no new fd
// once it has raised.
func TestH9FailedTLSHandshakeClosesTheFDBeforeReturning(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	isOpen := func(fd int) bool { _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); return err == nil }
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		pair := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(pair[1])
		if _, err := unix.Write(pair[1], []byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
			return err
		}
		_, _, err := ConnectAcceptedSocket(at, func() Protocol { return newStreamRecorder(at, "accepted", &log) }, pair[0], WithTLS(serverCfg))
		log = append(log, fmt.Sprintf("ConnectAcceptedSocket failed=%v; fd open=%v", err != nil, isOpen(pair[0])))
		silent := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(silent[1])
		_, _, err = ConnectAcceptedSocket(at, func() Protocol { return newStreamRecorder(at, "silent", &log) }, silent[0], WithTLS(serverCfg), WithTLSHandshakeTimeout(time.Second))
		log = append(log, fmt.Sprintf("ConnectAcceptedSocket timeout=%v; fd open=%v", errors.Is(err, ErrTLSHandshakeTimeout), isOpen(silent[0])))

		// StartTLS as a client, against a peer that answers in plain text.
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			w.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			_, err := r.Read(t, -1)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		p := newStreamRecorder(at, "client", &log)
		tr, _, err := CreateConnection(at, func() Protocol { return p }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		fd, _ := Socket(tr)
		_, err = StartTLS(at, tr, p, clientCfg, false, "localhost")
		log = append(log, fmt.Sprintf("StartTLS failed=%v; fd open=%v", err != nil, isOpen(fd)))
		if err := settle(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{
		"ConnectAcceptedSocket failed=true; fd open=false",
		"ConnectAcceptedSocket timeout=true; fd open=false",
		"client:made",
		"StartTLS failed=true; fd open=false",
		"client:lost tls: first record does not look like a TLS handshake",
	}, log)
}
