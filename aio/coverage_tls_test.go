package aio

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// tlsProto is a Protocol with write flow control that logs its calls
// (data only through onData, which may be large) and resolves futures.
type tlsProto struct {
	name    string
	log     *[]string
	tr      Transport
	onMade  func(p *tlsProto)
	onData  func(p *tlsProto, d []byte)
	resumed *asyncio.Future[struct{}]
	lost    *asyncio.Future[struct{}]
}

func (p *tlsProto) add(s string) { *p.log = append(*p.log, p.name+":"+s) }
func (p *tlsProto) ConnectionMade(tr Transport) {
	p.tr = tr
	if p.onMade != nil {
		p.onMade(p)
	}
}
func (p *tlsProto) DataReceived(d []byte) {
	if p.onData != nil {
		p.onData(p, d)
	}
}
func (p *tlsProto) EOFReceived() bool { p.add("eof"); return false }
func (p *tlsProto) ConnectionLost(err error) {
	p.add(fmt.Sprintf("lost %v", err))
	if p.lost != nil {
		p.lost.SetResult(struct{}{})
	}
}
func (p *tlsProto) PauseWriting() { p.add("pause writing") }
func (p *tlsProto) ResumeWriting() {
	p.add("resume writing")
	if p.resumed != nil && !p.resumed.Done() {
		p.resumed.SetResult(struct{}{})
	}
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
		l := at.Loop()
		server := &tlsProto{name: "server", log: &serverLog, lost: asyncio.NewFuture[struct{}](l)}
		got := 0
		server.onData = func(p *tlsProto, d []byte) {
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
		client := &tlsProto{name: "client", log: &clientLog, resumed: asyncio.NewFuture[struct{}](l), lost: asyncio.NewFuture[struct{}](l)}
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		var re *asyncio.RuntimeError
		if err := tr.WriteEOF(); !errors.As(err, &re) || re.Msg != "SSL transport does not support write_eof()" {
			return fmt.Errorf("WriteEOF over TLS: %v", err)
		}
		if err := tr.SetWriteBufferLimits(32*1024, -1); err != nil {
			return err
		}
		if low, high := tr.GetWriteBufferLimits(); low != 8*1024 || high != 32*1024 {
			return fmt.Errorf("limits low=%d high=%d", low, high)
		}
		// A small kernel send buffer keeps most of the payload in the
		// transport's own buffer.
		unix.SetsockoptInt(tr.GetExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		tr.WriteLines(bytes.Repeat([]byte("x"), size/2), bytes.Repeat([]byte("y"), size/2))
		clientLog = append(clientLog, fmt.Sprintf("client:buffered=%v", tr.GetWriteBufferSize() > 32*1024))
		if _, err := asyncio.WaitFor(at, 10*time.Second, client.resumed); err != nil {
			return err
		}
		clientLog = append(clientLog, fmt.Sprintf("client:buffer after resume=%v", tr.GetWriteBufferSize() <= 8*1024))
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
	wantServer := []string{"server:got all", "server:closing=true", "server:lost <nil>"}
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
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		server := &tlsProto{name: "server", log: &log, lost: asyncio.NewFuture[struct{}](l)}
		server.onData = func(p *tlsProto, d []byte) {
			if string(d) == "go" {
				p.tr.Write([]byte("hello"))
			}
		}
		srv, err := CreateServer(at, func() Protocol { return server }, "127.0.0.1", 0, WithTLS(serverCfg))
		if err != nil {
			return err
		}
		received := asyncio.NewFuture[string](l)
		client := &tlsProto{name: "client", log: &log, lost: asyncio.NewFuture[struct{}](l)}
		client.onData = func(p *tlsProto, d []byte) { received.SetResult(string(d)) }
		tr, _, err := CreateConnection(at, func() Protocol { return client }, "127.0.0.1", serverPort(srv), WithTLS(clientCfg))
		if err != nil {
			return err
		}
		conn := tr.GetExtraInfo("ssl_object").(*tls.Conn)
		log = append(log, fmt.Sprintf("addrs match: %v %v",
			conn.LocalAddr().String() == tr.GetExtraInfo("sockname").(net.Addr).String(),
			conn.RemoteAddr().String() == srv.Addr().String()))
		tr.PauseReading()
		tr.PauseReading()
		log = append(log, fmt.Sprintf("reading=%v", tr.IsReading()))
		tr.Write([]byte("go"))
		// Ample time for "hello" to come back over loopback.
		if err := asyncio.Sleep(at, 50*time.Millisecond); err != nil {
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
		asyncio.WaitFor(at, 10*time.Second, client.lost)
		asyncio.WaitFor(at, 10*time.Second, server.lost)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"addrs match: true true",
		"reading=false",
		"received while paused=false",
		"reading=true",
		"received hello",
		"reading after Close=false",
		"client:lost <nil>",
		"server:eof",
		"server:lost <nil>",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// StreamWriter.WriteLines writes the chunks in order, as one stream
// (asyncio's writelines), over TCP and over TLS.
func TestStreamWriterWriteLines(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name         string
			server, dial []NetOption
		}{{"tcp", nil, nil}, {"tls", []NetOption{WithTLS(serverCfg)}, []NetOption{WithTLS(clientCfg)}}} {
			done := asyncio.NewFuture[struct{}](at.Loop())
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer done.SetResult(struct{}{})
				defer w.Close()
				for {
					line, err := r.ReadLine(t)
					if err != nil || len(line) == 0 {
						return err
					}
					log = append(log, fmt.Sprintf("%s %q", c.name, line))
				}
			}, "127.0.0.1", 0, c.server...)
			if err != nil {
				return err
			}
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), c.dial...)
			if err != nil {
				return err
			}
			if err := w.WriteLines([]byte("ab"), []byte("c\nd"), nil, []byte("\n")); err != nil {
				return err
			}
			if err := w.Drain(at); err != nil {
				return err
			}
			w.Close()
			if _, err := done.Await(at); err != nil {
				return err
			}
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	want := []string{`tcp "abc\n"`, `tcp "d\n"`, `tls "abc\n"`, `tls "d\n"`}
	if d := cmp.Diff(want, log); d != "" {
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
			release.Await(t) // a plain TCP server that never answers
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		for _, opts := range [][]NetOption{
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
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// SetProtocol switches the protocol that receives the following data and
// GetProtocol returns it (asyncio's set_protocol/get_protocol), on a plain
// and on a TLS transport.
func TestTransportSetProtocol(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		for _, c := range []struct {
			name         string
			server, dial []NetOption
		}{{"tcp", nil, nil}, {"tls", []NetOption{WithTLS(serverCfg)}, []NetOption{WithTLS(clientCfg)}}} {
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer w.Close()
				for {
					line, err := r.ReadLine(t)
					if err != nil || len(line) == 0 {
						return err
					}
					w.Write(append([]byte("echo "), line...))
				}
			}, "127.0.0.1", 0, c.server...)
			if err != nil {
				return err
			}
			var got *asyncio.Future[struct{}]
			onData := func(p *logProtocol, d []byte) { got.SetResult(struct{}{}) }
			first := newLogProtocol(l, c.name+" first", &log)
			first.onData = onData
			second := newLogProtocol(l, c.name+" second", &log)
			second.onData = onData
			tr, _, err := CreateConnection(at, func() Protocol { return first }, "127.0.0.1", serverPort(srv), c.dial...)
			if err != nil {
				return err
			}
			got = asyncio.NewFuture[struct{}](l)
			tr.Write([]byte("1\n"))
			got.Await(at)
			tr.SetProtocol(second)
			log = append(log, fmt.Sprintf("%s GetProtocol is second: %v", c.name, tr.GetProtocol() == Protocol(second)))
			got = asyncio.NewFuture[struct{}](l)
			tr.Write([]byte("2\n"))
			got.Await(at)
			tr.Close()
			asyncio.WaitFor(at, 10*time.Second, second.lost)
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	want := []string{
		"tcp first:made", "tcp first:data echo 1\n", "tcp GetProtocol is second: true", "tcp second:data echo 2\n", "tcp second:lost <nil>",
		"tls first:made", "tls first:data echo 1\n", "tls GetProtocol is second: true", "tls second:data echo 2\n", "tls second:lost <nil>",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}
