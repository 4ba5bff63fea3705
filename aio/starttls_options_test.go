//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	asyncio "github.com/go-asyncio/asyncio"
)

// StartTLS and StreamWriter.StartTLS take asyncio's start_tls timeouts:
// WithTLSHandshakeTimeout bounds the handshake (against a peer that never
// answers: ErrTLSHandshakeTimeout exactly then, on the virtual clock), and
// a bad value or an option start_tls does not take is a *ValueError naming
// it before anything happens: the stream is still plain and usable.
func TestStartTLSOptions_HandshakeTimeoutAndRefusals(t *testing.T) {
	clean(t)
	_, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		release := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			line, err := r.ReadLine(t) // one plain line, echoed
			if err != nil {
				return err
			}
			w.Write(line)
			//asynciovet:ignore droppedcancel test scaffolding: the server never answers the handshake until released
			release.Await(t)
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		for _, opts := range [][]Option{{WithTLSHandshakeTimeout(0)}, {WithTLSShutdownTimeout(-time.Second)}, {WithStreamLimit(10)}, {WithTLS(clientCfg)}} {
			log = append(log, describe(w.StartTLS(at, clientCfg, "localhost", opts...)))
		}
		_, raw := StartTLS(at, w.Transport(), nil, clientCfg, false, "", WithBacklog(1))
		log = append(log, describe(raw))
		w.Write([]byte("still plain\n"))
		line, err := r.ReadLine(at)
		_, isTLS := w.ExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("%q %v tls=%v", line, err, isTLS))
		start := at.Loop().Time()
		err = w.StartTLS(at, clientCfg, "localhost", WithTLSHandshakeTimeout(2*time.Second))
		log = append(log, fmt.Sprintf("timeout=%v after %v", errors.Is(err, ErrTLSHandshakeTimeout), at.Loop().Time()-start))
		release.SetResult(struct{}{})
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{
		"ValueError ssl_handshake_timeout should be a positive number, got 0s",
		"ValueError ssl_shutdown_timeout should be a positive number, got -1s",
		"ValueError StartTLS does not take the option WithStreamLimit (it applies to OpenConnection, OpenUnixConnection, StartServer, StartUnixServer, CreateSubprocessExec, CreateSubprocessShell, StartGroupServer, StartUnixGroupServer, StartHTTPServer)",
		"ValueError StartTLS does not take the option WithTLS (it applies to CreateConnection, CreateUnixConnection, OpenConnection, OpenUnixConnection, CreateServer, CreateUnixServer, StartServer, StartUnixServer, CreateGroupServer, CreateUnixGroupServer, StartGroupServer, StartUnixGroupServer, StartHTTPServer, ConnectAcceptedSocket)",
		"ValueError StartTLS does not take the option WithBacklog (it applies to CreateServer, CreateUnixServer, StartServer, StartUnixServer, CreateGroupServer, CreateUnixGroupServer, StartGroupServer, StartUnixGroupServer, StartHTTPServer)",
		`"still plain\n" <nil> tls=false`,
		"timeout=true after 2s",
	}, log)
}

// WithTLSShutdownTimeout given to StreamWriter.StartTLS bounds the TLS
// shutdown of the upgraded stream's Close: against a peer that stops
// reading, the connection is aborted then, with ErrTLSShutdownTimeout.
func TestStartTLSOptions_ShutdownTimeout(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		release := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if _, err := r.ReadLine(t); err != nil {
				return err
			}
			w.Write([]byte("GO\n")) // the client's handshake starts after this
			if err := w.StartTLS(t, serverCfg, ""); err != nil {
				return err
			}
			//asynciovet:ignore droppedcancel test scaffolding: the server stops reading (its reader fills and pauses the transport)
			release.Await(t)
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Write([]byte("STARTTLS\n"))
		if _, err := r.ReadLine(at); err != nil {
			return err
		}
		if err := w.StartTLS(at, clientCfg, "localhost", WithTLSShutdownTimeout(5*time.Second)); err != nil {
			return err
		}
		w.Write(bytes.Repeat([]byte("x"), 8<<20))
		start := at.Loop().Time()
		w.Close()
		err = guard(at, func() error { return w.WaitClosed(at) })
		log = append(log, fmt.Sprintf("closed after %v: sentinel=%v", at.Loop().Time()-start, errors.Is(err, ErrTLSShutdownTimeout)))
		release.SetResult(struct{}{})
		srv.Close()
		return guard(at, func() error { return srv.WaitClosed(at) })
	})
	expectLog(t, []string{"closed after 5s: sentinel=true"}, log)
}
