//go:build unix

package aio

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// The water marks follow asyncio's _set_write_buffer_limits, a negative
// value standing for None (STREAM-8).
func TestSTREAM8_WriteBufferLimits(t *testing.T) {
	cases := []struct{ high, low, wantHigh, wantLow int }{
		{-1, -1, 65536, 16384},
		{100, -1, 100, 25},
		{-1, 10, 40, 10},
		{0, 0, 0, 0},
	}
	for _, c := range cases {
		h, l, err := computeWriteLimits(c.high, c.low)
		if err != nil || h != c.wantHigh || l != c.wantLow {
			t.Errorf("limits(%d,%d) = %d,%d,%v", c.high, c.low, h, l, err)
		}
	}
	_, _, err := computeWriteLimits(1, 2)
	if err == nil || err.Error() != "asyncio: high (1) must be >= low (2) must be >= 0" {
		t.Fatalf("bad limits: %v", err)
	}
}

// A refused connect fails every way of connecting with ECONNREFUSED.
func TestFaultConnectionRefused(t *testing.T) {
	port := closedPort(t)
	var errs []error
	runNet(t, func(at *asyncio.T) error {
		_, _, err := OpenConnection(at, "127.0.0.1", port)
		errs = append(errs, err)
		_, _, err = CreateConnection(at, func() Protocol { return nil }, "127.0.0.1", port)
		errs = append(errs, err)
		_, err = DialConn(at, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
		errs = append(errs, err)
		return nil
	})
	for i, err := range errs {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("attempt %d: %v, want ECONNREFUSED", i, err)
		}
	}
}

// resetOnAccept is a server protocol that resets each connection (SO_LINGER
// 0 then close sends RST).
type resetOnAccept struct{ *streamRecorder }

func (p *resetOnAccept) ConnectionMade(tr Transport) {
	fd := tr.ExtraInfo("socket").(int)
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	tr.Abort()
}

// A connection the peer resets fails the pending read and WaitClosed with
// ECONNRESET.
func TestFaultResetByPeer(t *testing.T) {
	var readErr, closedErr error
	runNet(t, func(at *asyncio.T) error {
		var log []string
		srv, err := CreateServer(at, func() Protocol { return &resetOnAccept{newStreamRecorder(at, "s", &log)} }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		_, readErr = r.Read(at, 100)
		closedErr = w.WaitClosed(at)
		return nil
	})
	if !errors.Is(readErr, syscall.ECONNRESET) || !errors.Is(closedErr, syscall.ECONNRESET) {
		t.Fatalf("read: %v, wait_closed: %v; want ECONNRESET", readErr, closedErr)
	}
}

// Writing to a connection whose peer has closed: the peer answers with a
// RST and the next send fails with EPIPE; Drain and WaitClosed report it.
func TestFaultBrokenPipe(t *testing.T) {
	var lostErr, drainErr error
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		if b, err := r.Read(at, 10); len(b) != 0 || err != nil {
			return fmt.Errorf("want EOF, got %q %v", b, err)
		}
		for i := 0; i < 1000 && !w.protocol.(*streamProtocol).connLost; i++ {
			w.Write([]byte("x"))
			if err := asyncio.Sleep(at, time.Millisecond); err != nil {
				return err
			}
		}
		lostErr = w.WaitClosed(at)
		drainErr = w.Drain(at)
		return nil
	})
	if !errors.Is(lostErr, syscall.EPIPE) {
		t.Fatalf("connection lost with %v, want EPIPE", lostErr)
	}
	if !errors.Is(drainErr, syscall.EPIPE) {
		t.Fatalf("drain after loss: %v", drainErr)
	}
}

// Peer half-close: the client's WriteEOF reaches the server as EOF; the
// server, keeping its side open, still answers.
func TestFaultPeerHalfClose(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			all, err := r.Read(t, -1)
			if err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("server read %q eof=%v", all, r.AtEOF()))
			w.Write([]byte("got " + string(all)))
			w.Close()
			return w.WaitClosed(t)
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		w.Write([]byte("request"))
		log = append(log, fmt.Sprintf("can_write_eof=%v", w.CanWriteEOF()))
		w.WriteEOF()
		reply, err := r.Read(at, -1)
		log = append(log, fmt.Sprintf("client read %q %v", reply, err))
		log = append(log, fmt.Sprintf("write after eof: %v", w.Write([]byte("x"))))
		log = append(log, fmt.Sprintf("writelines after eof: %v", w.WriteLines([]byte("x"))))
		log = append(log, fmt.Sprintf("empty writelines after eof: %v", w.WriteLines()))
		w.Close()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		w.WaitClosed(at)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"can_write_eof=true",
		`server read "request" eof=true`,
		`client read "got request" <nil>`,
		"write after eof: Cannot call write() after write_eof()",
		"writelines after eof: Cannot call writelines() after write_eof()",
		"empty writelines after eof: Cannot call writelines() after write_eof()",
	}
	expectLog(t, want, log)
}

// A slow reader: the writer's buffer stays bounded by the high water mark
// (plus one chunk), Drain blocks while paused and returns once the buffer
// is at or below the low water mark; every byte arrives.
func TestFaultSlowReaderFlowControl(t *testing.T) {
	const chunk = 16 * 1024
	const total = 8 << 20
	var maxBuf, blocked int
	var received int
	runNet(t, func(at *asyncio.T) error {
		startReading := asyncio.NewFuture[struct{}](at)
		done := asyncio.NewFuture[int](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			if _, err := startReading.Await(t); err != nil {
				return err
			}
			all, err := r.Read(t, -1)
			done.SetResult(len(all))
			w.Close()
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		high, low := w.Transport().WriteBufferLimits()
		data := make([]byte, chunk)
		for sent := 0; sent < total; sent += chunk {
			w.Write(data)
			maxBuf = max(maxBuf, w.Transport().WriteBufferSize())
			if w.protocol.(*streamProtocol).paused {
				blocked++
				if !startReading.Done() {
					startReading.SetResult(struct{}{})
				}
				if err := w.Drain(at); err != nil {
					return err
				}
				if sz := w.Transport().WriteBufferSize(); sz > low {
					return fmt.Errorf("drain returned with %d > low %d buffered", sz, low)
				}
			}
		}
		if maxBuf > high+chunk {
			return fmt.Errorf("buffer reached %d > high %d + chunk", maxBuf, high)
		}
		w.WriteEOF()
		if received, err = done.Await(at); err != nil {
			return err
		}
		w.Close()
		srv.Close()
		return srv.WaitClosed(at)
	})
	if blocked == 0 {
		t.Fatal("Drain never blocked: the reader was not slow enough")
	}
	if received != total {
		t.Fatalf("received %d of %d", received, total)
	}
}

// Close and Abort after Close, and Close after the connection is lost,
// do nothing: ConnectionLost is called once.
func TestFaultCloseTransportTwice(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := CreateServer(at, func() Protocol { return newStreamRecorder(at.Loop(), "s", new([]string)) }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, p, err := CreateConnection(at, func() Protocol { return newStreamRecorder(at.Loop(), "c", &log) }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.Close()
		log = append(log, fmt.Sprintf("closing=%v", tr.IsClosing()))
		tr.Close()
		tr.Abort()
		if _, err := p.(*streamRecorder).lost.Await(at); err != nil {
			return err
		}
		tr.Close()
		if err := settle(at); err != nil { // a second ConnectionLost would be called by then
			return err
		}
		srv.Close()
		srv.CloseClients()
		return srv.WaitClosed(at)
	})
	want := []string{"c:made", "closing=true", "c:lost <nil>"}
	expectLog(t, want, log)
}

// Writes after Close (or after the connection is lost) are dropped
// silently, as in asyncio; nothing reaches the peer.
func TestFaultWriteAfterClose(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		peerLost := asyncio.NewFuture[error](at)
		srv, err := CreateServer(at, func() Protocol {
			p := newStreamRecorder(l, "s", &log)
			p.lost = peerLost
			return p
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, p, err := CreateConnection(at, func() Protocol { return newStreamRecorder(l, "c", &log) }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.Write([]byte("before"))
		tr.Close()
		log = append(log, fmt.Sprintf("write after close: %v", tr.Write([]byte("after-close"))))
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		p.(*streamRecorder).lost.Await(at)
		for i := 0; i < 6; i++ {
			if err := tr.Write([]byte("after-lost")); err != nil {
				return err
			}
		}
		log = append(log, fmt.Sprintf("buffered=%d", tr.WriteBufferSize()))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		peerLost.Await(at)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"c:made", "write after close: <nil>", "c:lost <nil>", "buffered=0", "s:made", "s:data before", "s:eof", "s:lost <nil>"}
	// The server's events interleave with the client's; compare them apart.
	var client, server []string
	for _, s := range log {
		if s[0] == 's' {
			server = append(server, s)
		} else {
			client = append(client, s)
		}
	}
	expectLog(t, want, append(client, server...))
}

// PauseReading removes the read interest; ResumeReading restores it and
// the data that arrived meanwhile is delivered.
func TestTransportPauseResumeReading(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Write([]byte("data"))
			w.Close()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		got := asyncio.NewFuture[struct{}](at)
		tr, p, err := CreateConnection(at, func() Protocol {
			p := newStreamRecorder(l, "c", &log)
			p.keepOpen = true
			p.onData = func(p *streamRecorder, d []byte) {
				p.add("data " + string(d))
				got.SetResult(struct{}{})
			}
			return p
		}, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.PauseReading()
		fd := tr.ExtraInfo("socket").(int)
		log = append(log, fmt.Sprintf("paused reading=%v watched=%v", tr.IsReading(), watchingAny(l, fd)))
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("resumed reading=%v watched=%v", tr.IsReading(), watchingAny(l, fd)))
		if _, err := got.Await(at); err != nil {
			return err
		}
		tr.Close()
		//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
		p.(*streamRecorder).lost.Await(at)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"c:made", "paused reading=false watched=false", "resumed reading=true watched=true", "c:data data", "c:lost <nil>"}
	expectLog(t, want, log)
}

// SetProtocol switches the protocol that receives the following data and
// Protocol returns it (asyncio's set_protocol/get_protocol), on a plain
// and on a TLS transport.
func TestTransportSetProtocol(t *testing.T) {
	serverCfg, clientCfg := testTLSConfigs(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		for _, c := range []struct {
			name         string
			server, dial []Option
		}{{"tcp", nil, nil}, {"tls", []Option{WithTLS(serverCfg)}, []Option{WithTLS(clientCfg)}}} {
			srv, err := StartServer(at, echoLines("echo "), "127.0.0.1", 0, c.server...)
			if err != nil {
				return err
			}
			var got *asyncio.Future[struct{}]
			onData := func(p *streamRecorder, d []byte) {
				p.add("data " + string(d))
				got.SetResult(struct{}{})
			}
			first := newStreamRecorder(l, c.name+" first", &log)
			first.onData = onData
			second := newStreamRecorder(l, c.name+" second", &log)
			second.onData = onData
			tr, _, err := CreateConnection(at, func() Protocol { return first }, "127.0.0.1", serverPort(srv), c.dial...)
			if err != nil {
				return err
			}
			got = asyncio.NewFuture[struct{}](l)
			tr.Write([]byte("1\n"))
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
			got.Await(at)
			tr.SetProtocol(second)
			log = append(log, fmt.Sprintf("%s Protocol is second: %v", c.name, tr.Protocol() == Protocol(second)))
			got = asyncio.NewFuture[struct{}](l)
			tr.Write([]byte("2\n"))
			//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
			got.Await(at)
			tr.Close()
			//asynciovet:ignore droppedcancel test teardown: waits for the connection to be lost
			asyncio.WaitFor(at, 10*time.Second, second.lost)
			srv.Close()
			if err := srv.WaitClosed(at); err != nil {
				return err
			}
		}
		return nil
	})
	want := []string{
		"tcp first:made", "tcp first:data echo 1\n", "tcp Protocol is second: true", "tcp second:data echo 2\n", "tcp second:lost <nil>",
		"tls first:made", "tls first:data echo 1\n", "tls Protocol is second: true", "tls second:data echo 2\n", "tls second:lost <nil>",
	}
	expectLog(t, want, log)
}

// The write buffer's memory stays close to the bytes it holds while a peer
// that does not read makes it grow (issue 11, breakage 8: 256 MB buffered
// cost 826 MB and more of RSS, a contiguous slice regrown by append), it
// is released as it drains, and the bytes arrive whole and in order
// through the vectored writes of many chunks.
func TestWriteBufferMemoryStaysNearBytesHeld(t *testing.T) {
	const total = 48 << 20
	var grew, heldMB uint64
	runNet(t, func(at *asyncio.T) error {
		fds := socketpair(t, unix.SOCK_STREAM)
		defer unix.Close(fds[1])
		var log []string
		p := newStreamRecorder(at, "w", &log)
		tr := newSocketTransport(at.Loop(), fds[0], "unix", p, nil, nil)
		if err := settle(at); err != nil {
			return err
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		chunk := make([]byte, 1000) // odd sizes: chunks fill up unevenly
		for sent := 0; sent < total; sent += len(chunk) {
			for i := range chunk {
				chunk[i] = byte(sent + i)
			}
			tr.Write(chunk)
		}
		runtime.ReadMemStats(&after)
		if after.HeapSys > before.HeapSys { // HeapSys may shrink meanwhile: no unsigned underflow
			grew = (after.HeapSys - before.HeapSys) >> 20
		}
		heldMB = uint64(tr.WriteBufferSize()) >> 20
		// The peer reads it all: every byte in order.
		got, buf := 0, make([]byte, 256<<10)
		for got < total {
			if !readable(fds[1]) {
				if err := asyncio.Sleep(at, 0); err != nil { // let the transport send
					return err
				}
				continue
			}
			n, err := unix.Read(fds[1], buf) //asynciovet:ignore blockingcall readable(fds[1]) just said data is waiting: the read returns at once
			if err != nil {
				return err
			}
			for i, b := range buf[:n] {
				if b != byte(got+i) {
					return fmt.Errorf("byte %d is %d, want %d", got+i, b, byte(got+i))
				}
			}
			got += n
		}
		if n := tr.WriteBufferSize(); n != 0 {
			return fmt.Errorf("%d bytes still buffered", n)
		}
		if len(tr.wbuf.chunks) != 0 || tr.wbuf.scratch != nil && tr.wbuf.scratch.iovecs[0].Base != nil {
			return errors.New("the drained buffer still references sent chunks")
		}
		tr.Close()
		return settle(at)
	})
	if heldMB < 40 || grew > heldMB+heldMB/4+4 {
		t.Errorf("heap grew by %d MB for %d MB buffered", grew, heldMB)
	}
}

// WithMaxWriteBuffer is the hard stop for a writer that does not wait:
// a write that would take the buffer past the limit fails whole with
// ErrWriteBufferFull and buffers nothing; writes go through again once the
// peer reads. Plain and TLS alike.
func TestWithMaxWriteBufferRefusesPastTheLimit(t *testing.T) {
	serverTLS, clientTLS := testTLSConfigs(t)
	for _, tc := range []struct {
		name string
		opts []Option
		srv  []Option
	}{
		{"plain", nil, nil},
		{"tls", []Option{WithTLS(clientTLS)}, []Option{WithTLS(serverTLS)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 1 << 20
			runNet(t, func(at *asyncio.T) error {
				startReading := asyncio.NewFuture[struct{}](at)
				received := asyncio.NewFuture[int](at)
				srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
					if _, err := startReading.Await(t); err != nil {
						return err
					}
					all, err := r.Read(t, -1)
					received.SetResult(len(all))
					return err
				}, "127.0.0.1", 0, tc.srv...)
				if err != nil {
					return err
				}
				defer srv.Close()
				_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv), append(tc.opts, WithMaxWriteBuffer(limit))...)
				if err != nil {
					return err
				}
				data := make([]byte, 32<<10)
				written := 0
				for i := 0; ; i++ {
					if i > 10000 {
						return errors.New("the limit never stopped a write")
					}
					before := w.Transport().WriteBufferSize()
					err := w.Write(data)
					if errors.Is(err, ErrWriteBufferFull) {
						if after := w.Transport().WriteBufferSize(); after != before {
							return fmt.Errorf("a refused write changed the buffer: %d -> %d", before, after)
						}
						break
					}
					if err != nil {
						return err
					}
					written += len(data)
					if n := w.Transport().WriteBufferSize(); n > limit {
						return fmt.Errorf("buffer %d past the limit", n)
					}
				}
				startReading.SetResult(struct{}{})
				if err := w.Drain(at); err != nil {
					return err
				}
				if err := w.Write(data); err != nil {
					return fmt.Errorf("after Drain: %v", err)
				}
				written += len(data)
				w.Close()
				n, err := received.Await(at)
				if err != nil {
					return err
				}
				if n != written {
					return fmt.Errorf("received %d of %d", n, written)
				}
				return nil
			})
		})
	}
}

func TestWithMaxWriteBufferRejectsNonPositive(t *testing.T) {
	runNet(t, func(at *asyncio.T) error {
		_, _, err := OpenConnection(at, "127.0.0.1", closedPort(t), WithMaxWriteBuffer(0))
		if got := describe(err); got != "ValueError WithMaxWriteBuffer: the limit must be > 0" {
			t.Errorf("got %s", got)
		}
		return nil
	})
}

// A nil protocol factory is a *ValueError naming the call, returned
// before any socket exists; a factory that panics or returns nil gets the
// socket made for it closed, and the call returns the *PanicError or the
// *ValueError (the panic used to fail the calling task with the connected
// socket left open until the process ended).
func TestProtocolFactoryFailureLeavesNoSocket(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		lfd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(lfd)
		if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return err
		}
		if err := unix.Listen(lfd, 8); err != nil { // the backlog completes connects; nothing accepts
			return err
		}
		port := localAddr(lfd, "tcp").(*net.TCPAddr).Port
		// The loop opens its selector now, not in a case.
		if err := at.Loop().AddReader(lfd, func() {}); err != nil {
			return err
		}
		at.Loop().RemoveReader(lfd)
		host := NewSimNetwork(at, 1).Host("h")
		boom := func() Protocol { panic("factory boom") }
		none := func() Protocol { return nil }
		udp := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
		cases := []struct {
			name string
			call func() error
			want string // the error's text
		}{
			{"CreateConnection nil", func() error { _, _, err := CreateConnection(at, nil, "127.0.0.1", port); return err }, "CreateConnection: nil protocol factory"},
			{"CreateUnixConnection nil", func() error { _, _, err := CreateUnixConnection(at, nil, "/nonexistent"); return err }, "CreateUnixConnection: nil protocol factory"},
			{"CreateServer nil", func() error { _, err := CreateServer(at, nil, "127.0.0.1", 0); return err }, "CreateServer: nil protocol factory"},
			{"CreateUnixServer nil", func() error { _, err := CreateUnixServer(at, nil, t.TempDir()+"/s"); return err }, "CreateUnixServer: nil protocol factory"},
			{"CreateDatagramEndpoint nil", func() error { _, _, err := CreateDatagramEndpoint(at, nil, udp, nil); return err }, "CreateDatagramEndpoint: nil protocol factory"},
			{"StartServer nil callback", func() error { _, err := StartServer(at, nil, "127.0.0.1", 0); return err }, "StartServer: nil client callback"},
			{"StartUnixServer nil callback", func() error { _, err := StartUnixServer(at, nil, t.TempDir()+"/s"); return err }, "StartUnixServer: nil client callback"},
			{"CreateConnection panics", func() error { _, _, err := CreateConnection(at, boom, "127.0.0.1", port); return err }, "factory boom"},
			{"CreateConnection returns nil", func() error { _, _, err := CreateConnection(at, none, "127.0.0.1", port); return err }, "CreateConnection: the protocol factory returned nil"},
			{"CreateConnection TLS panics", func() error {
				_, _, err := CreateConnection(at, boom, "127.0.0.1", port, WithTLS(&tls.Config{}))
				return err
			}, "factory boom"},
			{"CreateUnixConnection WithSocket panics", func() error {
				fds := socketpair(t, unix.SOCK_STREAM)
				defer unix.Close(fds[1])
				_, _, err := CreateUnixConnection(at, boom, "", WithSocket(fds[0]))
				return err
			}, "factory boom"},
			{"CreateDatagramEndpoint panics", func() error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { panic("factory boom") }, udp, nil)
				return err
			}, "factory boom"},
			{"simulated CreateDatagramEndpoint panics", func() error {
				_, _, err := CreateDatagramEndpoint(at, func() DatagramProtocol { panic("factory boom") }, udp, nil, WithNetwork(host))
				return err
			}, "factory boom"},
		}
		for _, c := range cases {
			leaked, err := callCountingFDs(t, c.call)
			var ve *asyncio.ValueError
			var pe *asyncio.PanicError
			switch {
			case err == nil:
				t.Errorf("%s: no error", c.name)
			case !errors.As(err, &ve) && !errors.As(err, &pe):
				t.Errorf("%s: %T %v, want a *ValueError or *PanicError", c.name, err, err)
			case !strings.Contains(err.Error(), c.want):
				t.Errorf("%s: %q, want %q", c.name, err, c.want)
			}
			if len(leaked) > 0 {
				t.Errorf("%s: descriptors left open: %v", c.name, leaked)
			}
		}
		return nil
	})
}

// callCountingFDs runs call, a panic turned into its error, and lists the
// descriptors it left open.
func callCountingFDs(t *testing.T, call func() error) (leaked []string, err error) {
	t.Helper()
	before := openFDs(t)
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("the call panicked: %v", r)
			}
		}()
		err = call()
	}()
	return newFDs(t, before), err
}

// newFDs lists the descriptors open now that were not in before.
func newFDs(t *testing.T, before map[int]bool) []string {
	var out []string
	for fd := range openFDs(t) {
		if !before[fd] {
			target, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
			out = append(out, fmt.Sprintf("%d (%s)", fd, target))
		}
	}
	return out
}

// A closing transport whose buffer the write callback empties calls
// ConnectionLost there and then, as asyncio's _write_ready calls
// _call_connection_lost: what ResumeWriting scheduled runs after it.
func TestSocketTransport_ConnectionLostWhenTheLastWriteDrains(t *testing.T) {
	clean(t)
	var log []string
	runNet(t, func(at *asyncio.T) error {
		var s *pausedSink
		srv, err := CreateServer(at, func() Protocol { s = &pausedSink{}; return s }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		p := &drainWatcher{loop: at.Loop(), log: &log, lost: asyncio.NewFuture[struct{}](at)}
		tr, _, err := CreateConnection(at, func() Protocol { return p }, "127.0.0.1", srv.Addr().(*net.TCPAddr).Port)
		if err != nil {
			return err
		}
		for s == nil || s.tr == nil {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		// Resume only once the buffer is empty: with the default low-water
		// mark, a loaded machine's kernel may take the last 16 KiB in two
		// sends, and ResumeWriting's callback rightly runs between them.
		if err := tr.SetWriteBufferLimits(64<<10, 0); err != nil {
			return err
		}
		if err := tr.Write(make([]byte, 16<<20)); err != nil { // more than the socket buffers take
			return err
		}
		tr.Close()
		s.tr.ResumeReading()
		if _, err := p.lost.Await(at); err != nil {
			return err
		}
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	expectLog(t, []string{"pause_writing", "resume_writing", "connection_lost <nil>", "call_soon scheduled in resume_writing"}, log)
}

type drainWatcher struct {
	BaseProtocol
	loop *asyncio.Loop
	log  *[]string
	lost *asyncio.Future[struct{}]
}

func (p *drainWatcher) PauseWriting() { *p.log = append(*p.log, "pause_writing") }
func (p *drainWatcher) ResumeWriting() {
	*p.log = append(*p.log, "resume_writing")
	p.loop.CallSoon(func() { *p.log = append(*p.log, "call_soon scheduled in resume_writing") })
}
func (p *drainWatcher) ConnectionLost(err error) {
	*p.log = append(*p.log, fmt.Sprintf("connection_lost %v", err))
	_ = p.lost.SetResult(struct{}{})
}

// pausedSink accepts a connection without reading until told to.
type pausedSink struct {
	BaseProtocol
	tr Transport
}

func (s *pausedSink) ConnectionMade(tr Transport) { s.tr = tr; tr.PauseReading() }

// A socket transport reads up to asyncio's max_size, 256 KiB, per read
// event (_SelectorSocketTransport.max_size): 200 KiB already waiting in
// the socket arrive in one DataReceived.
func TestSocketTransport_ReadsMaxSizePerEvent(t *testing.T) {
	clean(t)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)
	data := make([]byte, 200*1024)
	if n, err := unix.Write(fds[1], data); err != nil || n != len(data) {
		unix.Close(fds[0])
		t.Skipf("the socket holds %d of %d bytes (%v)", n, len(data), err)
	}
	var sizes []int
	runVirtual(t, func(at *asyncio.T) error {
		var log []string
		p := newStreamRecorder(at, "s", &log)
		all := asyncio.NewFuture[struct{}](at)
		total := 0
		p.onData = func(_ *streamRecorder, d []byte) {
			sizes = append(sizes, len(d))
			if total += len(d); total == len(data) {
				all.SetResult(struct{}{})
			}
		}
		tr, _, err := CreateUnixConnection(at, func() Protocol { return p }, "", WithSocket(fds[0]))
		if err != nil {
			return err
		}
		if _, err := all.Await(at); err != nil {
			return err
		}
		tr.Close()
		_, err = p.lost.Await(at)
		return err
	})
	if len(sizes) != 1 || maxRead != 256*1024 {
		t.Fatalf("read %v of %d bytes waiting, at most %d a read: want them in one read of at most 256 KiB", sizes, len(data), maxRead)
	}
}

// Only -1 stands for asyncio's None in SetWriteBufferLimits: any other
// negative mark is asyncio's ValueError, with asyncio's message (None is
// filled in first: low = high // 4, high = 4 * low), and leaves the marks
// as they were.
func TestSTREAM8_NegativeWriteBufferLimits(t *testing.T) {
	clean(t)
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		tr, _, err := CreateUnixConnection(at, func() Protocol { return &BaseProtocol{} }, "", WithSocket(fds[0]))
		if err != nil {
			return err
		}
		if err := tr.SetWriteBufferLimits(100, 20); err != nil {
			return err
		}
		for _, c := range [][2]int{{10, -5}, {-5, -1}, {-1, -5}, {-2, -2}, {10, -1}, {-1, 8}, {-1, -1}} {
			err := tr.SetWriteBufferLimits(c[0], c[1])
			h, l := tr.WriteBufferLimits()
			var ve *asyncio.ValueError
			log = append(log, fmt.Sprintf("(%d, %d): %v ValueError=%v -> (%d, %d)", c[0], c[1], err, errors.As(err, &ve), h, l))
			tr.SetWriteBufferLimits(100, 20)
		}
		tr.Close()
		return settle(at)
	})
	expectLog(t, []string{
		"(10, -5): asyncio: high (10) must be >= low (-5) must be >= 0 ValueError=true -> (100, 20)",
		"(-5, -1): asyncio: high (-5) must be >= low (-2) must be >= 0 ValueError=true -> (100, 20)",
		"(-1, -5): asyncio: high (-20) must be >= low (-5) must be >= 0 ValueError=true -> (100, 20)",
		"(-2, -2): asyncio: high (-2) must be >= low (-2) must be >= 0 ValueError=true -> (100, 20)",
		"(10, -1): <nil> ValueError=false -> (10, 2)",
		"(-1, 8): <nil> ValueError=false -> (32, 8)",
		"(-1, -1): <nil> ValueError=false -> (65536, 16384)",
	}, log)
}
