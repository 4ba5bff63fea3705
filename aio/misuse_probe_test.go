//asynciovet:file-ignore droppedcancel every dropped error here belongs to a call that must panic before it returns (the misuse under test); misusePanic checks the panic

//go:build unix

package aio

// Hostile probe h33: bad input and misuse of aio's exported API. Each
// misuse must get a clear error naming it before anything changes. The
// cases marked "defect" failed before the fix next to them (CHANGELOG,
// h33); the others held and stay as regression tests.

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/misusetest"
	"golang.org/x/sys/unix"
)

// The probe's two checks (internal/misusetest).
var (
	misusePanic = misusetest.Panic
	misuseErr   = misusetest.Err
)

// A negative size is socket.recv's ValueError "negative buffersize in
// recv", before anything is read (defect: makeslice panicked with "len
// out of range").
func TestMisuseSockRecvNegativeSize(t *testing.T) {
	var ve *asyncio.ValueError
	runVirtual(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name, want string
			typ        int
			recv       func(fd int) error
		}{
			{"SockRecv", "negative buffersize in recv", unix.SOCK_STREAM, func(fd int) error {
				_, err := SockRecv(at, fd, -1)
				return err
			}},
			{"SockRecvFrom", "negative buffersize in recvfrom", unix.SOCK_DGRAM, func(fd int) error {
				_, _, err := SockRecvFrom(at, fd, -1)
				return err
			}},
		} {
			fds := socketpair(t, c.typ)
			if _, err := unix.Write(fds[1], []byte("abc")); err != nil {
				return err
			}
			misuseErr(t, c.name+"(-1)", c.want, &ve, c.recv(fds[0]))
			if watchingAny(at.Loop(), fds[0]) {
				t.Errorf("%s(-1) left the fd watched", c.name)
			}
			got, err := SockRecv(at, fds[0], 10)
			if err != nil || string(got) != "abc" {
				t.Errorf("%s(-1) consumed data: then SockRecv = %q, %v", c.name, got, err)
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return nil
	})
}

// Feeding after EOF panics with a *RuntimeError, where asyncio asserts
// (defect: the panic value was a bare string, which no errors.Is/As
// matches).
func TestMisuseFeedDataAfterEOF(t *testing.T) {
	var re *asyncio.RuntimeError
	runVirtual(t, func(at *asyncio.T) error {
		r := NewStreamReader(at, 16)
		r.FeedData([]byte("ab"))
		r.FeedEOF()
		misusePanic(t, "FeedData after FeedEOF", "feed_data after feed_eof", &re, func() { r.FeedData([]byte("x")) })
		got, err := r.Read(at, -1)
		if err != nil || string(got) != "ab" {
			t.Errorf("after the refused FeedData: Read = %q, %v", got, err)
		}
		return nil
	})
}

// Values not made by their constructor (defects: nil-pointer
// dereferences; a zero StreamReader's read until EOF returned nothing
// at once, its other reads named NewFuture; a zero Conn's Close set its
// shut flag, then crashed holding its mutex; a zero Server's WaitClosed
// named NewFuture).
func TestMisuseZeroValuesAreValueErrors(t *testing.T) {
	var ve *asyncio.ValueError
	runVirtual(t, func(at *asyncio.T) error {
		for _, c := range []struct {
			name string
			call func(r *StreamReader)
		}{
			{"Read", func(r *StreamReader) { _, _ = r.Read(at, -1) }},
			{"ReadExactly", func(r *StreamReader) { _, _ = r.ReadExactly(at, 1) }},
			{"ReadUntil", func(r *StreamReader) { _, _ = r.ReadUntil(at, []byte("\n")) }},
			{"ReadLine", func(r *StreamReader) { _, _ = r.ReadLine(at) }},
			{"Lines", func(r *StreamReader) { _ = r.Lines(at) }},
			{"Chunks", func(r *StreamReader) { _ = r.Chunks(at, 1) }},
			{"FeedData", func(r *StreamReader) { r.FeedData([]byte("x")) }},
			{"FeedEOF", func(r *StreamReader) { r.FeedEOF() }},
			{"SetException", func(r *StreamReader) { r.SetException(errors.New("x")) }},
		} {
			var r StreamReader
			misusePanic(t, "zero StreamReader."+c.name, "StreamReader."+c.name+": zero StreamReader", &ve, func() { c.call(&r) })
			if len(r.buf) != 0 || r.eof || r.exception != nil || r.waiter != nil {
				t.Errorf("zero StreamReader.%s: changed by the refused call", c.name)
			}
		}
		for _, c := range []struct {
			name string
			call func(w *StreamWriter)
		}{
			{"Write", func(w *StreamWriter) { _ = w.Write([]byte("x")) }},
			{"WriteLines", func(w *StreamWriter) { _ = w.WriteLines([]byte("x")) }},
			{"WriteEOF", func(w *StreamWriter) { _ = w.WriteEOF() }},
			{"CanWriteEOF", func(w *StreamWriter) { _ = w.CanWriteEOF() }},
			{"Close", func(w *StreamWriter) { w.Close() }},
			{"IsClosing", func(w *StreamWriter) { _ = w.IsClosing() }},
			{"ExtraInfo", func(w *StreamWriter) { _ = w.ExtraInfo("peername") }},
			{"Transport", func(w *StreamWriter) { _ = w.Transport() }},
			{"Drain", func(w *StreamWriter) { _ = w.Drain(at) }},
			{"WaitClosed", func(w *StreamWriter) { _ = w.WaitClosed(at) }},
			{"StartTLS", func(w *StreamWriter) { _ = w.StartTLS(at, &tls.Config{}, "x") }},
		} {
			var w StreamWriter
			misusePanic(t, "zero StreamWriter."+c.name, "StreamWriter."+c.name+": zero StreamWriter", &ve, func() { c.call(&w) })
		}
		for _, c := range []struct {
			name string
			call func(c *Conn)
		}{
			{"Read", func(c *Conn) { _, _ = c.Read(make([]byte, 1)) }},
			{"Write", func(c *Conn) { _, _ = c.Write([]byte("x")) }},
			{"Close", func(c *Conn) { _ = c.Close() }},
			{"CloseWrite", func(c *Conn) { _ = c.CloseWrite() }},
			{"SetDeadline", func(c *Conn) { _ = c.SetDeadline(time.Time{}) }},
		} {
			var conn Conn
			misusePanic(t, "zero Conn."+c.name, "Conn."+c.name+": zero Conn", &ve, func() { c.call(&conn) })
			if !conn.mu.TryLock() {
				t.Errorf("zero Conn.%s: left its mutex held", c.name)
			} else {
				conn.mu.Unlock()
			}
			if conn.shut || conn.fdClosed {
				t.Errorf("zero Conn.%s: marked shut by the refused call", c.name)
			}
		}
		if _, err := unix.FcntlInt(0, unix.F_GETFD, 0); err != nil {
			t.Errorf("fd 0 (the zero Conn's) was closed: %v", err)
		}
		var srv Server
		misusePanic(t, "zero Server.WaitClosed", "Server.WaitClosed: zero Server", &ve, func() { _ = srv.WaitClosed(at) })
		misusePanic(t, "zero Server.ServeForever", "Server.ServeForever: zero Server", &ve, func() { _ = srv.ServeForever(at) })
		if len(srv.waiters) != 0 {
			t.Errorf("zero Server.WaitClosed queued a waiter")
		}
		for _, c := range []struct {
			name string
			call func(p *Process)
		}{
			{"Pid", func(p *Process) { _ = p.Pid() }},
			{"ReturnCode", func(p *Process) { _, _ = p.ReturnCode() }},
			{"Wait", func(p *Process) { _, _ = p.Wait(at) }},
			{"Kill", func(p *Process) { _ = p.Kill() }},
			{"Terminate", func(p *Process) { _ = p.Terminate() }},
			{"SendSignal", func(p *Process) { _ = p.SendSignal(unix.SIGTERM) }},
			{"Communicate", func(p *Process) { _, _, _ = p.Communicate(at, nil) }},
		} {
			var p Process
			misusePanic(t, "zero Process."+c.name, "Process."+c.name+": zero Process", &ve, func() { c.call(&p) })
		}
		for _, c := range []struct {
			name string
			call func(n *SimNetwork)
		}{
			{"Host", func(n *SimNetwork) { n.Host("a") }},
			{"SetDefaultLink", func(n *SimNetwork) { n.SetDefaultLink(LinkConfig{}) }},
			{"Partition", func(n *SimNetwork) { n.Partition(nil, nil) }},
			{"At", func(n *SimNetwork) { n.At(time.Second, func() {}) }},
			{"Conns", func(n *SimNetwork) { n.Conns() }},
			{"Close", func(n *SimNetwork) { n.Close() }},
		} {
			var n SimNetwork
			misusePanic(t, "zero SimNetwork."+c.name, "SimNetwork."+c.name+": zero SimNetwork", &ve, func() { c.call(&n) })
			if len(n.hosts) != 0 {
				t.Errorf("zero SimNetwork.%s: changed by the refused call", c.name)
			}
		}
		var gs GroupServer
		misuseErr(t, "zero GroupServer.Close", "GroupServer.Close: zero GroupServer", &ve, gs.Close(at))
		if gs.closed || gs.shut.Load() {
			t.Errorf("zero GroupServer.Close: marked closed by the refused call")
		}
		return nil
	})
}

// The zero DatagramQueue is ready to use, as NewDatagramQueue's (defect:
// its methods dereferenced its nil queue).
func TestMisuseZeroDatagramQueueUsable(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		var dq DatagramQueue
		dq.DatagramReceived([]byte("a"), nil)
		dq.ErrorReceived(errors.New("icmp"))
		dq.ConnectionLost(nil)
		var got []string
		for d, err := range dq.Datagrams(at) {
			got = append(got, string(d.Data)+"|"+describe(err))
		}
		if want := []string{"a|<nil>", "|icmp"}; strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("zero DatagramQueue yielded %q, want %q", got, want)
		}
		return nil
	})
}

// NewConn refuses a negative fd and a network it cannot wrap, before the
// Conn is made or registered (defect: NewConn(t, -1, "tcp") returned a
// Conn, registered with the loop, on no descriptor).
func TestMisuseNewConnBadArguments(t *testing.T) {
	var ve *asyncio.ValueError
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	runVirtual(t, func(at *asyncio.T) error {
		misusePanic(t, "NewConn(-1)", "NewConn: fd -1 is not a file descriptor", &ve, func() { NewConn(at, -1, "tcp") })
		misusePanic(t, "NewConn(udp)", `NewConn: network "udp"`, &ve, func() { NewConn(at, fds[0], "udp") })
		return nil
	})
	// The loop closed: had NewConn registered the fd, it would be closed.
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFD, 0); err != nil {
		t.Errorf("the refused NewConn's fd was closed with the loop: %v", err)
	}
	unix.Close(fds[0])
}

// What held: bad arguments of the stream, server, connection, TLS and
// simulated-network calls, refused before anything is opened.
func TestMisuseHeldRegression(t *testing.T) {
	var ve *asyncio.ValueError
	nan := func() float64 { var z float64; return z / z }()
	runVirtual(t, func(at *asyncio.T) error {
		misusePanic(t, "NewStreamReader(0)", "Limit cannot be <= 0", &ve, func() { NewStreamReader(at, 0) })
		r := NewStreamReader(at, 8)
		r.FeedData([]byte("abc"))
		misusePanic(t, "Chunks(0)", "the chunk size must be > 0", &ve, func() { r.Chunks(at, 0) })
		misusePanic(t, "SetException(nil)", "nil error", &ve, func() { r.SetException(nil) })
		_, err := r.ReadExactly(at, -1)
		misuseErr(t, "ReadExactly(-1)", "readexactly size can not be less than zero", &ve, err)
		_, err = r.ReadUntil(at)
		misuseErr(t, "ReadUntil()", "Separator should contain at least one element", &ve, err)
		_, err = r.ReadUntil(at, []byte{})
		misuseErr(t, "ReadUntil(empty)", "Separator should be at least one-byte string", &ve, err)
		if got, err := r.Read(at, 3); err != nil || string(got) != "abc" {
			t.Errorf("refused reads consumed data: Read = %q, %v", got, err)
		}

		noProto := func() Protocol { return nil }
		_, err = CreateServer(at, nil, "127.0.0.1", 0)
		misuseErr(t, "CreateServer(nil factory)", "nil protocol factory", &ve, err)
		_, err = CreateServer(at, noProto, "127.0.0.1", 70000)
		misuseErr(t, "CreateServer(port 70000)", "port must be 0-65535", &ve, err)
		_, _, err = CreateConnection(at, noProto, "127.0.0.1", -1)
		misuseErr(t, "CreateConnection(port -1)", "port must be 0-65535", &ve, err)
		for _, c := range []struct {
			name, want string
			opt        Option
		}{
			{"WithStreamLimit(0)", "Limit cannot be <= 0", WithStreamLimit(0)},
			{"WithMaxWriteBuffer(-1)", "the limit must be > 0", WithMaxWriteBuffer(-1)},
			{"WithSocket(-1)", "a file descriptor is >= 0", WithSocket(-1)},
			{"WithFamily(999)", "the family must be", WithFamily(999)},
			{"WithTLS(nil)", "the *tls.Config must not be nil", WithTLS(nil)},
			{"WithResolver(nil)", "the resolver must not be nil", WithResolver(nil)},
			{"the zero Option", "the zero Option", Option{}},
			{"WithTLSHandshakeTimeout without TLS", "only meaningful with ssl", WithTLSHandshakeTimeout(time.Second)},
		} {
			_, _, err := OpenConnection(at, "127.0.0.1", 1, c.opt)
			misuseErr(t, "OpenConnection "+c.name, c.want, &ve, err)
		}
		_, _, err = OpenConnection(at, "127.0.0.1", 1, WithTLS(&tls.Config{}), WithTLSHandshakeTimeout(-1))
		misuseErr(t, "WithTLSHandshakeTimeout(-1)", "ssl_handshake_timeout should be a positive number", &ve, err)
		_, err = DialConn(at, "udp", "127.0.0.1:1")
		misuseErr(t, "DialConn(udp)", `network "udp" is not supported`, &ve, err)
		_, err = CreateSubprocessExec(at, "", nil)
		misuseErr(t, "CreateSubprocessExec(empty)", "program is empty", &ve, err)

		n := NewSimNetwork(at, 1)
		defer n.Close()
		misusePanic(t, "LinkConfig.Loss NaN", "LinkConfig.Loss must be a probability in [0, 1]", &ve, func() { n.SetDefaultLink(LinkConfig{Loss: nan}) })
		misusePanic(t, "LinkConfig.Latency -1", "LinkConfig.Latency is negative", &ve, func() { n.SetDefaultLink(LinkConfig{Latency: -1}) })
		misusePanic(t, "Host(\"\")", "empty host name", &ve, func() { n.Host("") })
		misusePanic(t, "SetLink(nil)", "nil host", &ve, func() { n.SetLink(nil, nil, LinkConfig{}) })
		if len(n.hosts) != 0 {
			t.Errorf("refused SimNetwork calls made %d hosts", len(n.hosts))
		}
		misusePanic(t, "WithServer(nil)", "WithServer: nil server or function", &ve, func() { _ = WithServer(at, nil, func() error { return nil }) })
		return nil
	})
}
