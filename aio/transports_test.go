package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// logProtocol records its callbacks and signals ConnectionLost.
type logProtocol struct {
	name   string
	log    *[]string
	tr     Transport
	keep   bool // EOFReceived result
	lost   *asyncio.Future[error]
	onData func(p *logProtocol, data []byte)
}

func newLogProtocol(l *asyncio.Loop, name string, log *[]string) *logProtocol {
	return &logProtocol{name: name, log: log, lost: asyncio.NewFuture[error](l)}
}

func (p *logProtocol) add(s string) { *p.log = append(*p.log, p.name+":"+s) }
func (p *logProtocol) ConnectionMade(tr Transport) {
	p.tr = tr
	p.add("made")
}
func (p *logProtocol) DataReceived(d []byte) {
	p.add("data " + string(d))
	if p.onData != nil {
		p.onData(p, d)
	}
}
func (p *logProtocol) EOFReceived() bool { p.add("eof"); return p.keep }
func (p *logProtocol) ConnectionLost(err error) {
	p.add(fmt.Sprintf("lost %v", err))
	p.lost.SetResult(err)
}

// closedPort returns a 127.0.0.1 port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	fd, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	return localAddr(fd, "tcp").(*net.TCPAddr).Port
}

func TestSockPrimitivesEcho(t *testing.T) {
	var got string
	runNet(t, func(at *asyncio.T) error {
		o, _ := buildOptions(nil)
		lfd, err := listenOn(unix.AF_INET, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}, o)
		if err != nil {
			return err
		}
		defer unix.Close(lfd)
		port := localAddr(lfd, "tcp").(*net.TCPAddr).Port
		server := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) {
			cfd, _, err := SockAccept(t, lfd)
			if err != nil {
				return struct{}{}, err
			}
			defer unix.Close(cfd)
			b, err := SockRecv(t, cfd, 100)
			if err != nil {
				return struct{}{}, err
			}
			return struct{}{}, SockSendall(t, cfd, append([]byte("echo:"), b...))
		})
		fd, err := NewSocket(unix.AF_INET, unix.SOCK_STREAM)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := SockConnect(at, fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}); err != nil {
			return err
		}
		if err := SockSendall(at, fd, []byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 100)
		n, err := SockRecvInto(at, fd, buf)
		got = string(buf[:n])
		if _, err := server.Await(at); err != nil {
			return err
		}
		return err
	})
	if got != "echo:ping" {
		t.Fatalf("got %q", got)
	}
}

// Cancelling a task blocked in SockRecv removes the fd's read interest,
// and the fd can be read again afterwards.
func TestSockRecvCancelRemovesInterest(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		l := at.Loop()
		rd := asyncio.CreateTask(at, func(t *asyncio.T) ([]byte, error) { return SockRecv(t, fds[0], 10) })
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprintf("registered=%v", watchingRead(l, fds[0])))
		rd.Cancel()
		_, err = rd.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v registered=%v", asyncio.IsCancelled(err), watchingAny(l, fds[0])))
		unix.Write(fds[1], []byte("hi"))
		b, err := SockRecv(at, fds[0], 10)
		log = append(log, fmt.Sprintf("%q %v", b, err))
		return nil
	})
	want := []string{"registered=true", "cancelled=true registered=false", `"hi" <nil>`}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

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
type resetOnAccept struct{ logProtocol }

func (p *resetOnAccept) ConnectionMade(tr Transport) {
	fd := tr.GetExtraInfo("socket").(int)
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	tr.Abort()
}

func TestFaultResetByPeer(t *testing.T) {
	var readErr, closedErr error
	runNet(t, func(at *asyncio.T) error {
		var log []string
		srv, err := CreateServer(at, func() Protocol { return &resetOnAccept{*newLogProtocol(at.Loop(), "s", &log)} }, "127.0.0.1", 0)
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
		for i := 0; i < 1000 && !w.protocol.connectionLost; i++ {
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
		w.Close()
		w.WaitClosed(at)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"can_write_eof=true",
		`server read "request" eof=true`,
		`client read "got request" <nil>`,
		"write after eof: asyncio: Cannot call write() after write_eof()",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// accept() running out of descriptors unregisters the listening socket
// and re-registers it after the retry delay: two injected EMFILE failures
// cost exactly two accept calls, spaced by the delay, then the pending
// connection is accepted.
func TestFaultAcceptEMFILEBacksOff(t *testing.T) {
	var log []string
	var handlerMsgs []string
	const delay = 30 * time.Millisecond
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			handlerMsgs = append(handlerMsgs, ctx.Message+": "+ctx.Err.Error())
		})
		accepted := asyncio.NewFuture[struct{}](at)
		srv, err := CreateServer(at, func() Protocol {
			if !accepted.Done() {
				accepted.SetResult(struct{}{})
			}
			return newLogProtocol(l, "s", new([]string))
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		lfd := srv.Sockets()[0]
		fails := 2
		var last time.Duration
		srv.retryDelay = delay
		srv.accept = func(fd int) (int, unix.Sockaddr, error) {
			now := l.Time()
			gap := "first"
			if last != 0 {
				gap = fmt.Sprintf("after-delay=%v", now-last >= delay)
			}
			last = now
			if fails > 0 {
				fails--
				log = append(log, "accept EMFILE "+gap)
				return -1, nil, unix.EMFILE
			}
			nfd, sa, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			if err == nil {
				log = append(log, "accept ok "+gap)
			}
			return nfd, sa, err
		}
		client := asyncio.CreateTask(at, func(t *asyncio.T) (Transport, error) {
			tr, _, err := CreateConnection(t, func() Protocol { return newLogProtocol(l, "c", new([]string)) }, "127.0.0.1", serverPort(srv))
			return tr, err
		})
		tr, err := client.Await(at)
		if err != nil {
			return err
		}
		// While backing off, the listening socket is not watched.
		for len(log) == 0 {
			asyncio.Sleep(at, 0)
		}
		log = append(log, fmt.Sprintf("watched=%v", watchingAny(l, lfd)))
		if _, err := accepted.Await(at); err != nil {
			return err
		}
		tr.Close()
		srv.Close()
		srv.CloseClients()
		return srv.WaitClosed(at)
	})
	want := []string{"accept EMFILE first", "watched=false", "accept EMFILE after-delay=true", "accept ok after-delay=true"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
	wantMsgs := []string{
		"socket.accept() out of system resource: accept: too many open files",
		"socket.accept() out of system resource: accept: too many open files",
	}
	if d := cmp.Diff(wantMsgs, handlerMsgs); d != "" {
		t.Fatal(d)
	}
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
		low, high := w.Transport().GetWriteBufferLimits()
		data := make([]byte, chunk)
		for sent := 0; sent < total; sent += chunk {
			w.Write(data)
			maxBuf = max(maxBuf, w.Transport().GetWriteBufferSize())
			if w.protocol.paused {
				blocked++
				if !startReading.Done() {
					startReading.SetResult(struct{}{})
				}
				if err := w.Drain(at); err != nil {
					return err
				}
				if sz := w.Transport().GetWriteBufferSize(); sz > low {
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

func TestFaultCloseTransportTwice(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := CreateServer(at, func() Protocol { return newLogProtocol(at.Loop(), "s", new([]string)) }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, p, err := CreateConnection(at, func() Protocol { return newLogProtocol(at.Loop(), "c", &log) }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.Close()
		log = append(log, fmt.Sprintf("closing=%v", tr.IsClosing()))
		tr.Close()
		tr.Abort()
		if _, err := p.(*logProtocol).lost.Await(at); err != nil {
			return err
		}
		tr.Close()
		for i := 0; i < 3; i++ {
			asyncio.Sleep(at, 0) // a second ConnectionLost would show up here
		}
		srv.Close()
		srv.CloseClients()
		return srv.WaitClosed(at)
	})
	want := []string{"c:made", "closing=true", "c:lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Writes after Close (or after the connection is lost) are dropped
// silently, as in asyncio; nothing reaches the peer.
func TestFaultWriteAfterClose(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		l := at.Loop()
		peerLost := asyncio.NewFuture[error](at)
		srv, err := CreateServer(at, func() Protocol {
			p := newLogProtocol(l, "s", &log)
			p.lost = peerLost
			return p
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		tr, p, err := CreateConnection(at, func() Protocol { return newLogProtocol(l, "c", &log) }, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.Write([]byte("before"))
		tr.Close()
		log = append(log, fmt.Sprintf("write after close: %v", tr.Write([]byte("after-close"))))
		p.(*logProtocol).lost.Await(at)
		for i := 0; i < 6; i++ {
			if err := tr.Write([]byte("after-lost")); err != nil {
				return err
			}
		}
		log = append(log, fmt.Sprintf("buffered=%d", tr.GetWriteBufferSize()))
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
	if d := cmp.Diff(want, append(client, server...)); d != "" {
		t.Fatal(d)
	}
}

var _ = sync.Mutex{}

// CloseClients closes every accepted connection (the peers read EOF) and
// WaitClosed returns once they are gone; AbortClients does the same
// without flushing.
func TestServerCloseAndAbortClients(t *testing.T) {
	for _, abort := range []bool{false, true} {
		var log []string
		runNet(t, func(at *asyncio.T) error {
			srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
				_, err := r.Read(t, -1) // until the server closes us
				return err
			}, "127.0.0.1", 0)
			if err != nil {
				return err
			}
			var readers []*StreamReader
			var writers []*StreamWriter
			for i := 0; i < 2; i++ {
				r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
				if err != nil {
					return err
				}
				readers, writers = append(readers, r), append(writers, w)
			}
			for len(srv.clients) < 2 {
				asyncio.Sleep(at, time.Millisecond)
			}
			srv.Close()
			waited := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.WaitClosed(t) })
			asyncio.Sleep(at, 0)
			log = append(log, fmt.Sprintf("closed, clients=%d waiting=%v", len(srv.clients), !waited.Done()))
			if abort {
				srv.AbortClients()
			} else {
				srv.CloseClients()
			}
			for i, r := range readers {
				b, err := r.Read(at, -1)
				log = append(log, fmt.Sprintf("client %d: %q %v", i, b, err == nil || errors.Is(err, syscall.ECONNRESET)))
				writers[i].Close()
			}
			_, err = waited.Await(at)
			log = append(log, fmt.Sprintf("wait_closed %v clients=%d", err, len(srv.clients)))
			return nil
		})
		want := []string{"closed, clients=2 waiting=true", `client 0: "" true`, `client 1: "" true`, "wait_closed <nil> clients=0"}
		if d := cmp.Diff(want, log); d != "" {
			t.Fatalf("abort=%v: %s", abort, d)
		}
	}
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
			p := newLogProtocol(l, "c", &log)
			p.keep = true
			p.onData = func(*logProtocol, []byte) { got.SetResult(struct{}{}) }
			return p
		}, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		tr.PauseReading()
		fd := tr.GetExtraInfo("socket").(int)
		log = append(log, fmt.Sprintf("paused reading=%v watched=%v", tr.IsReading(), watchingAny(l, fd)))
		tr.ResumeReading()
		log = append(log, fmt.Sprintf("resumed reading=%v watched=%v", tr.IsReading(), watchingAny(l, fd)))
		if _, err := got.Await(at); err != nil {
			return err
		}
		tr.Close()
		p.(*logProtocol).lost.Await(at)
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{"c:made", "paused reading=false watched=false", "resumed reading=true watched=true", "c:data data", "c:lost <nil>"}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

func watchingRead(l *asyncio.Loop, fd int) bool { r, _ := l.Watching(fd); return r }

func watchingAny(l *asyncio.Loop, fd int) bool { r, w := l.Watching(fd); return r || w }
