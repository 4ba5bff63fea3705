//go:build unix

package aio

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// A client_connected_cb that fails is reported with the transport of its
// connection, which is then closed (CPython 3.13 streams.py,
// StreamReaderProtocol.connection_made's callback: call_exception_handler
// with 'message', 'exception' and 'transport', then transport.close()).
// CPython 3.13.0, plain and over TLS:
//
//	handler: Unhandled exception in client_connected_cb ValueError('cb failed') same transport: True closing: False
//	client read b'' at_eof True
func TestH4FailedClientCallbackReportsTransport(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		var handlerTr Transport
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, fmt.Sprintf("handler: %s %v same transport: %v closing: %v",
				ctx.Message, ctx.Err, ctx.Transport == any(handlerTr), handlerTr.IsClosing()))
		})
		for _, tlsOn := range []bool{false, true} {
			var sopts, copts []Option
			if tlsOn {
				sopts, copts = []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}
			}
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				handlerTr = w.Transport()
				return errors.New("cb failed")
			}, "127.0.0.1", 0, sopts...)
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), copts...)
			if err != nil {
				return err
			}
			b, err := asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.Read(t, -1) })
			log = append(log, fmt.Sprintf("tls=%v client read %q %v at_eof %v", tlsOn, b, err, r.AtEOF()))
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"handler: Unhandled exception in client_connected_cb cb failed same transport: true closing: false",
		`tls=false client read "" <nil> at_eof true`,
		"handler: Unhandled exception in client_connected_cb cb failed same transport: true closing: false",
		`tls=true client read "" <nil> at_eof true`,
	}, log)
}

// StreamWriter's String is asyncio's StreamWriter repr:
// "<StreamWriter transport=... reader=<StreamReader ...>>".
func TestH4StreamWriterString(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, echoLines(""), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithStreamLimit(10))
		if err != nil {
			return err
		}
		fd, _ := Socket(w)
		log = append(log, fmt.Sprint(w), fmt.Sprintf("<StreamWriter transport=<socketTransport fd=%d open> reader=<StreamReader limit=10 transport=<socketTransport fd=%d open>>>", fd, fd))
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	if len(log) != 2 || log[0] != log[1] {
		t.Fatalf("StreamWriter String:\n got %s\nwant %s", log[0], log[1])
	}
}

// A protocol callback that fails on a connection is a fatal error whose
// report names the transport, as asyncio's _fatal_error
// (selector_events.py: call_exception_handler({'message': ...,
// 'exception': exc, 'transport': self, 'protocol': self._protocol})):
// here the transport the protocol was given, plain or TLS. It had none.
func TestH4FatalErrorReportsTransport(t *testing.T) {
	clean(t)
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, tlsOn := range []bool{false, true} {
			var sopts, copts []Option
			if tlsOn {
				sopts, copts = []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}
			}
			var slog []string
			sp := newStreamRecorder(at, "server", &slog)
			sp.onData = func(*streamRecorder, []byte) { panic("data_received failed") }
			reported := asyncio.NewFuture[struct{}](at)
			at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
				log = append(log, fmt.Sprintf("tls=%v %s same transport: %v", tlsOn, ctx.Message, ctx.Transport != nil && ctx.Transport == any(sp.tr)))
				if !reported.Done() {
					reported.SetResult(struct{}{})
				}
			})
			srv, err := CreateServer(at, func() Protocol { return sp }, "127.0.0.1", 0, sopts...)
			if err != nil {
				return err
			}
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), copts...)
			if err != nil {
				return err
			}
			w.Write([]byte("boom\n"))
			if _, err := asyncio.WaitFor(at, edgeGuard, reported); err != nil {
				return err
			}
			if _, err := asyncio.WaitForFunc(at, edgeGuard, func(t *asyncio.T) ([]byte, error) { return r.Read(t, -1) }); err != nil && !errors.Is(err, syscall.ECONNRESET) {
				return err
			}
			w.Close()
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	expectLog(t, []string{
		"tls=false Fatal error: protocol.data_received() call failed. same transport: true",
		"tls=true Fatal error: protocol.data_received() call failed. same transport: true",
	}, log)
}
