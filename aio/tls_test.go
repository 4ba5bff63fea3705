//go:build unix

package aio

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// Streams over TLS on both ends: a line echo, including a 200 000-byte
// line (many TLS records; over the default limit, so both ends raise it
// with WithStreamLimit); CanWriteEOF is false.
func TestTLSStreamsEcho(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			for {
				line, err := r.ReadLine(t)
				if err != nil || len(line) == 0 {
					w.Close()
					return err
				}
				w.Write([]byte(strings.ToUpper(string(line))))
			}
		}, "127.0.0.1", 0, WithTLS(serverCfg), WithStreamLimit(1<<20))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg), WithStreamLimit(1<<20))
		if err != nil {
			return err
		}
		_, isTLS := w.ExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("tls=%v can_write_eof=%v", isTLS, w.CanWriteEOF()))
		big := strings.Repeat("y", 200000) + "\n"
		for _, s := range []string{"hello\n", big, "bye\n"} {
			w.Write([]byte(s))
			if err := w.Drain(at); err != nil {
				return err
			}
			line, err := r.ReadUntil(at, []byte("\n"))
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%d %q", len(line), line[:min(len(line), 5)]))
		}
		w.Close()
		if err := w.WaitClosed(at); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"tls=true can_write_eof=false", `6 "HELLO"`, `200001 "YYYYY"`, `4 "BYE\n"`}
	expectLog(t, want, log)
}

// A client that does not trust the server's certificate fails
// OpenConnection with crypto/x509's UnknownAuthorityError.
func TestTLSBadCertificateFailsConnect(t *testing.T) {
	serverCfg, _ := testTLSConfigs(t)
	var got error
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error { return nil }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		_, _, got = OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(&tls.Config{}))
		srv.Close()
		return srv.WaitClosed(at)
	})
	var uerr x509.UnknownAuthorityError
	if !errors.As(got, &uerr) {
		t.Fatalf("got %v, want an unknown-authority error", got)
	}
}

// StartTLS upgrades a plain connection after a plaintext exchange
// (STARTTLS style) on both sides.
func TestStreamWriterStartTLS(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if line, err := r.ReadLine(t); err != nil || string(line) != "STARTTLS\n" {
				return fmt.Errorf("server got %q %v", line, err)
			}
			w.Write([]byte("GO\n"))
			if err := w.StartTLS(t, serverCfg, ""); err != nil {
				return err
			}
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			w.Write([]byte("secret " + string(line)))
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
		w.Write([]byte("STARTTLS\n"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		line, _ := r.ReadLine(at)
		log = append(log, string(line), fmt.Sprintf("sslcontext before=%v", w.ExtraInfo("sslcontext")))
		if err := w.StartTLS(at, clientCfg, "localhost"); err != nil {
			return err
		}
		_, isTLS := w.ExtraInfo("ssl_object").(*tls.Conn)
		cfg, _ := w.ExtraInfo("sslcontext").(*tls.Config)
		log = append(log, fmt.Sprintf("tls=%v sslcontext=%v", isTLS, cfg != nil))
		w.Write([]byte("ping\n"))
		rest, err := r.Read(at, -1)
		log = append(log, string(rest))
		w.Close()
		srv.Close()
		return errors.Join(err, srv.WaitClosed(at))
	})
	want := []string{"GO\n", "sslcontext before=<nil>", "tls=true sslcontext=true", "secret ping\n"}
	expectLog(t, want, log)
}

// Over TLS, the raw transport's write flow control reaches the
// application protocol (PauseWriting above the high-water mark of the
// encrypted buffer, ResumeWriting once drained); WriteEOF is refused
// (asyncio: "SSL transport does not support write_eof()"); buffer limits
// pass through to the raw transport. When the peer aborts without
// close_notify the application sees EOFReceived, then ConnectionLost(nil)
// after the transport closes (asyncio's SSLProtocol eof handling), and
// the aborting side is closing at once.
func TestTLSTransportFlowControlEOFAndAbort(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	const size = 1 << 20
	var clientLog, serverLog []string
	runNet(t, func(at *asyncio.T) error {
		server := newStreamRecorder(at, "server", &serverLog)
		got := 0
		server.onData = func(p *streamRecorder, d []byte) {
			got += len(d)
			if got == size {
				p.add("got all")
				p.tr.Abort()
				p.add(fmt.Sprintf("closing=%v", p.tr.IsClosing()))
				p.tr.Abort() // idempotent
			}
		}
		srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		client := newStreamRecorder(at, "client", &clientLog)
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		weof := tr.WriteEOF()
		clientLog = append(clientLog, "client:WriteEOF: "+describe(weof)+fmt.Sprintf(" unsupported=%v", errors.Is(weof, errors.ErrUnsupported)))
		if err := tr.SetWriteBufferLimits(32*1024, -1); err != nil {
			return err
		}
		if high, low := tr.WriteBufferLimits(); high != 32*1024 || low != 8*1024 {
			return fmt.Errorf("limits high=%d low=%d", high, low)
		}
		// A small kernel send buffer keeps most of the payload in the
		// transport's own buffer.
		unix.SetsockoptInt(tr.ExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		tr.WriteLines(bytes.Repeat([]byte("x"), size/2), bytes.Repeat([]byte("y"), size/2))
		clientLog = append(clientLog, fmt.Sprintf("client:buffered=%v", tr.WriteBufferSize() > 32*1024))
		if _, err := asyncio.WaitFor(at, 10*time.Second, client.resumed); err != nil {
			return err
		}
		clientLog = append(clientLog, fmt.Sprintf("client:buffer after resume=%v", tr.WriteBufferSize() <= 8*1024))
		if _, err := asyncio.WaitFor(at, 10*time.Second, client.lost); err != nil {
			return err
		}
		if _, err := asyncio.WaitFor(at, 10*time.Second, server.lost); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	wantClient := []string{
		"client:made",
		"client:WriteEOF: RuntimeError SSL transport does not support write_eof() unsupported=true",
		"client:pause writing",
		"client:buffered=true",
		"client:resume writing",
		"client:buffer after resume=true",
		"client:eof",
		"client:lost <nil>",
	}
	if d := cmp.Diff(wantClient, clientLog); d != "" {
		t.Errorf("client (-want +got):\n%s", d)
	}
	wantServer := []string{"server:made", "server:got all", "server:closing=true", "server:lost <nil>"}
	if d := cmp.Diff(wantServer, serverLog); d != "" {
		t.Errorf("server (-want +got):\n%s", d)
	}
}

// PauseReading on a TLS transport stops delivery to the application
// until ResumeReading (asyncio's SSLProtocolTransport.pause_reading);
// both are idempotent and IsReading follows them. The ssl_object's
// addresses are the socket's.
func TestTLSTransportPauseReading(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log, serverLog []string
	runNet(t, func(at *asyncio.T) error {
		wrote := asyncio.NewFuture[struct{}](at)
		server := newStreamRecorder(at, "server", &serverLog)
		server.onData = func(p *streamRecorder, d []byte) {
			if string(d) == "go" {
				p.tr.Write([]byte("hello"))
				wrote.SetResult(struct{}{})
			}
		}
		srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		received := asyncio.NewFuture[string](at)
		client := newStreamRecorder(at, "client", &log)
		client.onData = func(p *streamRecorder, d []byte) { received.SetResult(string(d)) }
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		conn := tr.ExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("addrs match: %v %v",
			conn.LocalAddr().String() == tr.ExtraInfo("sockname").(net.Addr).String(),
			conn.RemoteAddr().String() == srv.Addr().String()))
		tr.PauseReading()
		tr.PauseReading()
		log = append(log, fmt.Sprintf("reading=%v", tr.IsReading()))
		tr.Write([]byte("go"))
		// Once the server has written "hello" over loopback, it waits in
		// the client's socket; paused, the client must not receive it.
		if _, err := wrote.Await(at); err != nil {
			return err
		}
		if err := settle(at); err != nil {
			return err
		}
		log = append(log, fmt.Sprintf("received while paused=%v", received.Done()))
		tr.ResumeReading()
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("reading=%v", tr.IsReading()))
		got, err := received.Await(at)
		if err != nil {
			return err
		}
		log = append(log, "received "+got)
		tr.Close()
		log = append(log, fmt.Sprintf("reading after Close=%v", tr.IsReading()))
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		asyncio.WaitFor(at, 10*time.Second, client.lost)
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		asyncio.WaitFor(at, 10*time.Second, server.lost)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"client:made",
		"addrs match: true true",
		"reading=false",
		"received while paused=false",
		"reading=true",
		"received hello",
		"reading after Close=false",
		"client:lost <nil>",
	}
	expectLog(t, want, log)
	if d := cmp.Diff([]string{"server:made", "server:eof", "server:lost <nil>"}, serverLog); d != "" {
		t.Fatal(d)
	}
}

// The TLS handshake is bounded by WithTLSHandshakeTimeout, default 60 s
// (asyncio's ssl_handshake_timeout / SSL_HANDSHAKE_TIMEOUT): against a
// server that never answers, the connect fails with
// ErrTLSHandshakeTimeout exactly then (virtual clock).
func TestTLSHandshakeTimeout(t *testing.T) {
	_, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		release := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
			release.Await(t) // a plain TCP server that never answers
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		for _, opts := range [][]Option{
			{WithTLS(clientCfg), WithTLSHandshakeTimeout(2 * time.Second)},
			{WithTLS(clientCfg)},
		} {
			start := at.Loop().Time()
			_, _, err := OpenConnection(at, "127.0.0.1", serverPort(srv), opts...)
			log = append(log, fmt.Sprintf("timeout=%v after %v", errors.Is(err, ErrTLSHandshakeTimeout), at.Loop().Time()-start))
		}
		release.SetResult(struct{}{})
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"timeout=true after 2s", "timeout=true after 1m0s"}
	expectLog(t, want, log)
}

// madePanicker panics in ConnectionMade and records its ConnectionLost.
type madePanicker struct {
	BaseProtocol
	log *[]string
}

func (p *madePanicker) ConnectionMade(Transport) { panic("made boom") }
func (p *madePanicker) ConnectionLost(err error) {
	var pe *asyncio.PanicError
	*p.log = append(*p.log, fmt.Sprintf("lost with the panic: %v", errors.As(err, &pe) && pe.Value == "made boom"))
}

// A panic in the application protocol's ConnectionMade after a TLS
// handshake is a fatal error, as in asyncio: reported at once, the
// connection aborted, ConnectionLost given the panic. A server stops
// counting the connection, so WaitClosed returns after Close (it used to
// wait for the loop's close, with the raw transport still registered); a
// client's CreateConnection returns the *PanicError.
func TestTLSConnectionMadePanicAbortsTheConnection(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			log = append(log, "exception handler: "+ctx.Message)
		})
		srv, err := CreateServer(at, func() Protocol { return &madePanicker{log: &log} }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		defer w.Close()
		var rest []byte
		err = asyncio.Timeout(at, time.Hour, func(*asyncio.TimeoutScope) error { rest, err = r.Read(at, -1); return err })
		log = append(log, fmt.Sprintf("client read %q %v", rest, err))
		srv.Close()
		err = asyncio.Timeout(at, time.Hour, func(*asyncio.TimeoutScope) error { return srv.WaitClosed(at) })
		log = append(log, fmt.Sprintf("server WaitClosed: %v", err))

		echo, err := StartServer(at, echoLines(""), "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		defer echo.Close()
		_, _, err = CreateConnection(at, func() Protocol { return &madePanicker{log: &log} }, "127.0.0.1", serverPort(echo), WithTLS(clientCfg))
		var pe *asyncio.PanicError
		log = append(log, fmt.Sprintf("client CreateConnection: PanicError %v", errors.As(err, &pe)))
		return settle(at)
	})
	expectLog(t, []string{
		"exception handler: Fatal error: protocol.connection_made() call failed.",
		"lost with the panic: true",
		`client read "" <nil>`,
		"server WaitClosed: <nil>",
		"exception handler: Fatal error: protocol.connection_made() call failed.",
		"client CreateConnection: PanicError true",
		"lost with the panic: true",
	}, log)
}
