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
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// accept() running out of descriptors unregisters the listening socket
// and re-registers it after the retry delay: two injected EMFILE failures
// cost exactly two accept calls, spaced by the delay, then the pending
// connection is accepted (virtual clock: the delay is exact).
func TestFaultAcceptEMFILEBacksOff(t *testing.T) {
	var log []string
	var handlerMsgs []string
	const delay = 30 * time.Millisecond
	runVirtual(t, func(at *asyncio.T) error {
		l := at.Loop()
		l.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			handlerMsgs = append(handlerMsgs, ctx.Message+": "+describe(ctx.Err))
		})
		accepted := asyncio.NewFuture[struct{}](at)
		srv, err := CreateServer(at, func() Protocol {
			if !accepted.Done() {
				accepted.SetResult(struct{}{})
			}
			return newStreamRecorder(l, "s", new([]string))
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		lfd := srv.Sockets()[0]
		fails := 2
		last := time.Duration(-1) // the loop time of the last accept call
		srv.retryDelay = delay
		srv.accept = func(fd int) (int, unix.Sockaddr, error) {
			now := l.Time()
			gap := "first"
			if last >= 0 {
				gap = fmt.Sprintf("after %v", now-last)
			}
			last = now
			if fails > 0 {
				fails--
				log = append(log, "accept EMFILE "+gap)
				return -1, nil, unix.EMFILE
			}
			nfd, sa, err := sysAccept(fd)
			if err == nil {
				log = append(log, "accept ok "+gap)
			}
			return nfd, sa, err
		}
		client := asyncio.CreateTask(at, func(t *asyncio.T) (Transport, error) {
			tr, _, err := CreateConnection(t, func() Protocol { return newStreamRecorder(l, "c", new([]string)) }, "127.0.0.1", serverPort(srv))
			return tr, err
		})
		tr, err := client.Await(at)
		if err != nil {
			return err
		}
		// While backing off, the listening socket is not watched.
		for len(log) == 0 {
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
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
	want := []string{"accept EMFILE first", "watched=false", "accept EMFILE after 30ms", "accept ok after 30ms"}
	expectLog(t, want, log)
	wantMsgs := []string{
		"socket.accept() out of system resource: syscall=accept EMFILE",
		"socket.accept() out of system resource: syscall=accept EMFILE",
	}
	expectLog(t, wantMsgs, handlerMsgs)
}

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
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				asyncio.Sleep(at, time.Millisecond)
			}
			srv.Close()
			waited := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.WaitClosed(t) })
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			asyncio.Sleep(at, 0)
			log = append(log, fmt.Sprintf("closed, clients=%d waiting=%v", len(srv.clients), !waited.Done()))
			if abort {
				srv.AbortClients()
			} else {
				srv.CloseClients()
			}
			for i, r := range readers {
				b, err := r.Read(at, -1)
				log = append(log, fmt.Sprintf("client %d: %q %v", i, b, err == nil || isReset(err)))
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

// ServeForever returns the cancellation after closing the server and
// waiting for its connections (asyncio's serve_forever).
func TestServerServeForeverCancel(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, closeAtOnce, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		serve := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, srv.ServeForever(t) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		asyncio.Sleep(at, 0)
		log = append(log, fmt.Sprint(srv.ServeForever(at)))
		serve.Cancel()
		_, err = serve.Await(at)
		log = append(log, fmt.Sprintf("cancelled=%v serving=%v sockets=%d", asyncio.IsCancelled(err), srv.IsServing(), len(srv.Sockets())))
		log = append(log, fmt.Sprint(srv.ServeForever(at) != nil))
		return srv.WaitClosed(at)
	})
	if len(log) != 3 || !strings.Contains(log[0], "is already being awaited on serve_forever()") ||
		log[1] != "cancelled=true serving=false sockets=0" || log[2] != "true" {
		t.Fatalf("log %q", log)
	}
}

// WithBacklog bounds how many connections one readiness event of the
// listening socket accepts (asyncio's _accept_connection loops backlog
// times): with two connections queued (the most a backlog of 1 lets the
// kernel queue), backlog 1 accepts one per loop iteration, the default
// (100) both in one.
func TestServerWithBacklogBoundsAcceptsPerEvent(t *testing.T) {
	perIteration := func(opts ...Option) []int {
		var counts []int
		var serverLog []string
		runNet(t, func(at *asyncio.T) error {
			l := at.Loop()
			srv, err := CreateServer(at, func() Protocol { return newStreamRecorder(at.Loop(), "server", &serverLog) }, "127.0.0.1", 0, opts...)
			if err != nil {
				return err
			}
			if srv.Loop() != l {
				return errors.New("Server.Loop is not the loop it was created on")
			}
			// Stop watching the listener while two clients connect, so
			// that both wait in the kernel's accept queue.
			l.RemoveReader(srv.Sockets()[0])
			srv.serving = false
			var clients []int
			for range 2 {
				fd, err := NewSocket("tcp4")
				if err != nil {
					return err
				}
				clients = append(clients, fd)
				if err := SockConnect(at, fd, srv.Addr()); err != nil {
					return err
				}
			}
			accepted := 0
			all := asyncio.NewFuture[struct{}](l)
			accept := srv.accept
			srv.accept = func(fd int) (int, unix.Sockaddr, error) {
				nfd, sa, err := accept(fd)
				if err == nil {
					counts[len(counts)-1]++
					if accepted++; accepted == 2 {
						all.SetResult(struct{}{})
					}
				}
				return nfd, sa, err
			}
			// A callback that re-schedules itself marks each iteration.
			var tick func()
			tick = func() {
				if !all.Done() {
					counts = append(counts, 0)
					l.CallSoon(tick)
				}
			}
			tick()
			srv.StartServing()
			if _, err := all.Await(at); err != nil {
				return err
			}
			for _, fd := range clients {
				unix.Close(fd)
			}
			srv.Close()
			return srv.WaitClosed(at)
		})
		var nonzero []int
		for _, c := range counts {
			if c > 0 {
				nonzero = append(nonzero, c)
			}
		}
		return nonzero
	}
	got := fmt.Sprint(perIteration(WithBacklog(1)), perIteration())
	if got != "[1 1] [2]" {
		t.Fatalf("accepts per iteration: backlog 1 and default = %s, want [1 1] [2]", got)
	}
}

// WithReusePort lets a second server listen on the port of the first
// (SO_REUSEPORT); without it the bind fails with EADDRINUSE (asyncio's
// reuse_port).
func TestServerWithReusePort(t *testing.T) {
	var log []string
	runVirtual(t, func(at *asyncio.T) error {
		first, err := CreateServer(at, func() Protocol { return nil }, "127.0.0.1", 0, WithReusePort())
		if err != nil {
			return err
		}
		port := serverPort(first)
		_, err = CreateServer(at, func() Protocol { return nil }, "127.0.0.1", port)
		log = append(log, "without: "+describe(err))
		second, err := CreateServer(at, func() Protocol { return nil }, "127.0.0.1", port, WithReusePort())
		log = append(log, fmt.Sprintf("with: %v, same port %v", err, err == nil && serverPort(second) == port))
		if second != nil {
			second.Close()
		}
		first.Close()
		return first.WaitClosed(at)
	})
	want := []string{"without: syscall=bind EADDRINUSE", "with: <nil>, same port true"}
	expectLog(t, want, log)
}

// A server and the connections it accepted, and the client connections,
// left open when Run returns: the loop's Close closes every socket it
// owns (issue 11, breakage 4: 21 descriptors stayed open, after GC too).
func TestLoopCloseClosesServersAndConnections(t *testing.T) {
	before := openFDs(t)
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, 1) // blocks: the clients never write
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		for range 10 {
			if _, _, err := OpenConnection(at, "127.0.0.1", serverPort(srv)); err != nil {
				return err
			}
		}
		return settle(at)
	})
	checkNoNewFDs(t, before)
}

// The same when the loop is closed under tasks still suspended in reads,
// a connect that never completes and a Unix server, without Run's
// cancellation of the tasks first.
func TestLoopCloseUnderSuspendedTasksClosesSockets(t *testing.T) {
	before := openFDs(t)
	path := t.TempDir() + "/s"
	l := asyncio.NewLoop()
	l.SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
	ready := asyncio.NewFuture[struct{}](l)
	//asynciovet:ignore unawaitedtask a task left pending for Close to cancel is the scenario under test
	asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		srv, err := StartUnixServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.Read(t, 1)
			return err
		}, path)
		if err != nil {
			return 0, err
		}
		_ = srv
		r, w, err := OpenUnixConnection(at, path)
		if err != nil {
			return 0, err
		}
		defer runtime.KeepAlive(w) // a collected writer closes its connection
		port := closedPort(t)
		defer blackHole(t, at, [4]byte{127, 0, 0, 1}, port)() // runs as Close unwinds the task
		//asynciovet:ignore unawaitedtask a task left pending for Close to cancel is the scenario under test
		asyncio.CreateTask(at, func(t *asyncio.T) (int, error) {
			// Never completes: the listener's queue is full.
			_, err := DialConn(t, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
			return 0, err
		})
		ready.SetResult(struct{}{})
		_, err = r.Read(at, 1)
		return 0, err
	})
	if err := l.RunUntilComplete(ready); err != nil {
		t.Fatal(err)
	}
	l.CallSoon(l.Stop) // one more iteration: the dial starts
	l.RunForever()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	checkNoNewFDs(t, before)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the socket file is left: %v", err)
	}
}

// Closing an old Unix server must not delete the socket file of a newer
// server bound to the same path since (issue 11, breakage 5; asyncio 3.13
// compares the inode before unlinking, we compare device and inode).
func TestUnixServerCloseKeepsNewerServersSocketFile(t *testing.T) {
	path := t.TempDir() + "/s"
	runNet(t, func(at *asyncio.T) error {
		old, err := StartUnixServer(at, closeAtOnce, path)
		if err != nil {
			return err
		}
		// A newer server replaces the file (CreateUnixServer removes a
		// stale socket file first).
		newer, err := StartUnixServer(at, echoLines("newer: "), path)
		if err != nil {
			return err
		}
		old.Close()
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("closing the old server removed the newer one's socket file: %v", err)
		}
		r, w, err := OpenUnixConnection(at, path)
		if err != nil {
			return err
		}
		w.Write([]byte("hi\n"))
		line, err := r.ReadLine(at)
		if string(line) != "newer: hi\n" {
			return fmt.Errorf("reply %q %v", line, err)
		}
		w.Close()
		newer.Close()
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			return fmt.Errorf("the newer server left its socket file: %v", err)
		}
		return nil
	})
}

// A Unix server's path held by a file that is not a socket (which is not
// removed) is EADDRINUSE, and the error names the path, as asyncio's
// create_unix_server does ("[Errno 98] Address '/run/ctl.sock' is already
// in use"): it said only "bind: address already in use" (tests/ports
// p120). A TCP server's names its address the same way.
func TestUnixServerAddressInUseNamesThePath(t *testing.T) {
	path := t.TempDir() + "/plain-file"
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	runNet(t, func(at *asyncio.T) error {
		_, err := StartUnixServer(at, closeAtOnce, path)
		if !errors.Is(err, unix.EADDRINUSE) {
			return fmt.Errorf("StartUnixServer on a regular file: %v, want EADDRINUSE", err)
		}
		if want := fmt.Sprintf("address %q is already in use", path); !strings.Contains(err.Error(), want) {
			return fmt.Errorf("StartUnixServer on a regular file: %q does not say %q", err, want)
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("the regular file was removed: %v", err)
		}
		return nil
	})
}

// A Unix socket path longer than sun_path takes is an error that says so
// and names the limit, for servers and clients alike (issue 11, breakage
// 8: bind said only "invalid argument").
func TestUnixPathTooLongNamesTheLimit(t *testing.T) {
	long := "/tmp/" + strings.Repeat("x", maxUnixPath)
	want := fmt.Sprintf("address %s: AF_UNIX path too long: %d bytes, the limit is %d", long, len(long), maxUnixPath)
	runNet(t, func(at *asyncio.T) error {
		before := openFDs(t)
		_, err1 := StartUnixServer(at, closeAtOnce, long)
		_, _, err2 := OpenUnixConnection(at, long)
		_, err3 := DialConn(at, "unix", long)
		fd, _ := NewSocket("unix")
		defer unix.Close(fd)
		err4 := SockConnect(at, fd, &net.UnixAddr{Name: long, Net: "unix"})
		for i, err := range []error{err1, err2, err3, err4} {
			var ae *net.AddrError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), "AF_UNIX path too long") {
				t.Errorf("call %d: %v, want a *net.AddrError saying the path is too long", i+1, err)
			}
			if i < 2 && err.Error() != want {
				t.Errorf("call %d: %q, want %q", i+1, err, want)
			}
		}
		before[fd] = true
		checkNoNewFDs(t, before)
		return nil
	})
}

// WithDeferredServing (asyncio's start_serving=False): the socket is
// bound, not listening, until StartServing (asyncio's Server._start_serving
// is what calls listen): Addr is known, a client is refused meanwhile, and
// once serving starts it is served. The same for a Unix server and for a
// socket given with WithSocket.
func TestServerWithDeferredServing(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, echoLines("s: "), "127.0.0.1", 0, WithDeferredServing())
		if err != nil {
			return err
		}
		defer srv.Close()
		if srv.IsServing() {
			return errors.New("serving before StartServing")
		}
		port := srv.Addr().(*net.TCPAddr).Port
		tcp := func() (*StreamReader, *StreamWriter, error) { return OpenConnection(at, "127.0.0.1", port) }
		if err := refusedUntilServing(at, "tcp", srv, tcp, "s: "); err != nil {
			return err
		}

		path := t.TempDir() + "/s"
		usrv, err := StartUnixServer(at, echoLines("u: "), path, WithDeferredServing())
		if err != nil {
			return err
		}
		defer usrv.Close()
		if err := refusedUntilServing(at, "unix", usrv, func() (*StreamReader, *StreamWriter, error) { return OpenUnixConnection(at, path) }, "u: "); err != nil {
			return err
		}

		fd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(fd)
			return err
		}
		ssrv, err := StartServer(at, echoLines("k: "), "", 0, WithSocket(fd), WithDeferredServing())
		if err != nil {
			unix.Close(fd)
			return err
		}
		defer ssrv.Close()
		sport := ssrv.Addr().(*net.TCPAddr).Port
		return refusedUntilServing(at, "WithSocket", ssrv, func() (*StreamReader, *StreamWriter, error) { return OpenConnection(at, "127.0.0.1", sport) }, "k: ")
	})
}

// refusedUntilServing checks a deferred server: dial is refused
// (ECONNREFUSED) until srv.StartServing, then a line sent gets the
// echo's prefix back.
func refusedUntilServing(at *asyncio.T, name string, srv *Server, dial func() (*StreamReader, *StreamWriter, error), prefix string) error {
	if _, _, err := dial(); !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s: connect before StartServing: %v, want ECONNREFUSED", name, err)
	}
	srv.StartServing()
	r, w, err := dial()
	if err != nil {
		return err
	}
	defer w.Close()
	w.Write([]byte("hi\n"))
	if line, err := r.ReadLine(at); string(line) != prefix+"hi\n" {
		return fmt.Errorf("%s: reply %q %v", name, line, err)
	}
	return nil
}

// WithKeepSocketFile (asyncio 3.13's cleanup_socket=False): Close leaves
// the socket file; without it Close removes the file.
func TestUnixServerWithKeepSocketFile(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		for _, keep := range []bool{false, true} {
			path := t.TempDir() + "/s"
			var opts []Option
			if keep {
				opts = append(opts, WithKeepSocketFile())
			}
			srv, err := StartUnixServer(at, closeAtOnce, path, opts...)
			if err != nil {
				return err
			}
			srv.Close()
			if _, err := os.Stat(path); (err == nil) != keep {
				return fmt.Errorf("keep=%v: after Close, stat says %v", keep, err)
			}
		}
		return nil
	})
}

// WithSocket (asyncio's sock=): a server listens on a socket the caller
// bound, a connection runs over a socket the caller connected; an address
// given as well, or a socket that is not a stream socket, is a
// *ValueError, before anything is taken over.
func TestWithSocket(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0) // blocking: made non-blocking
		if err != nil {
			return err
		}
		if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(lfd)
			return err
		}
		srv, err := StartServer(at, echoLines("s: "), "", 0, WithSocket(lfd))
		if err != nil {
			unix.Close(lfd)
			return err
		}
		defer srv.Close()
		addr := srv.Addr().(*net.TCPAddr)

		cfd, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		if err := SockConnect(at, cfd, addr); err != nil {
			unix.Close(cfd)
			return err
		}
		r, w, err := OpenConnection(at, "", 0, WithSocket(cfd))
		if err != nil {
			unix.Close(cfd)
			return err
		}
		w.Write([]byte("hi\n"))
		line, err := r.ReadLine(at)
		if string(line) != "s: hi\n" {
			return fmt.Errorf("reply %q %v", line, err)
		}
		w.Close()

		udp, err := NewSocket("udp4")
		if err != nil {
			return err
		}
		defer unix.Close(udp)
		for name, err := range map[string]error{
			"host and sock": func() error {
				_, err := CreateServer(at, func() Protocol { return &BaseProtocol{} }, "127.0.0.1", 0, WithSocket(udp))
				return err
			}(),
			"path and sock": func() error { _, _, err := OpenUnixConnection(at, "/x", WithSocket(udp)); return err }(),
			"datagram sock": func() error { _, _, err := OpenConnection(at, "", 0, WithSocket(udp)); return err }(),
		} {
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) {
				return fmt.Errorf("%s: %v, want a *ValueError", name, err)
			}
		}
		if _, err := unix.GetsockoptInt(udp, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
			return fmt.Errorf("a refused socket was closed: %v", err)
		}

		// The Unix calls take a Unix socket only (asyncio: "A UNIX Domain
		// Stream Socket was expected"), and refuse a TCP one untouched.
		tcp, err := NewSocket("tcp4")
		if err != nil {
			return err
		}
		defer unix.Close(tcp)
		if err := unix.SetNonblock(tcp, false); err != nil {
			return err
		}
		for name, err := range map[string]error{
			"CreateUnixServer": func() error {
				_, err := CreateUnixServer(at, func() Protocol { return &BaseProtocol{} }, "", WithSocket(tcp))
				return err
			}(),
			"CreateUnixConnection": func() error {
				_, _, err := CreateUnixConnection(at, func() Protocol { return &BaseProtocol{} }, "", WithSocket(tcp))
				return err
			}(),
			"StartUnixServer": func() error {
				_, err := StartUnixServer(at, echoLines("s: "), "", WithSocket(tcp))
				return err
			}(),
		} {
			var ve *asyncio.ValueError
			if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "A UNIX Domain Stream Socket was expected") {
				return fmt.Errorf("%s with a TCP socket: %v, want the *ValueError", name, err)
			}
		}
		if fl, err := unix.FcntlInt(uintptr(tcp), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			return fmt.Errorf("the refused TCP socket was changed (flags %#x, %v)", fl, err)
		}
		return nil
	})
}

// A server whose factory returns nil for a connection reports it and
// closes that connection (its transport used to call ConnectionMade on a
// nil protocol, a panic in a callback, and keep the socket open).
func TestServerFactoryReturningNilClosesTheConnection(t *testing.T) {
	var msgs []string
	runNet(t, func(at *asyncio.T) error {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			var ve *asyncio.ValueError
			msgs = append(msgs, fmt.Sprintf("%s: %v (ValueError %v)", ctx.Message, ctx.Err, errors.As(ctx.Err, &ve)))
		})
		srv, err := CreateServer(at, func() Protocol { return nil }, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		defer srv.Close()
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		defer w.Close()
		rest, err := r.Read(at, -1) // EOF: the server closed it
		msgs = append(msgs, fmt.Sprintf("client read %q %v", rest, err))
		return nil
	})
	expectLog(t, []string{
		"Error on transport creation for incoming connection: asyncio: Server: the protocol factory returned nil (ValueError true)",
		`client read "" <nil>`,
	}, msgs)
}

// host "" is asyncio's host=None: with a port, the loopback addresses are
// tried (::1, then 127.0.0.1); with port 0 (None) too, and no socket, a
// *ValueError before anything is opened.
func TestCreateConnection_NoHostIsLoopback(t *testing.T) {
	runVirtual(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, echoLines("s: "), "127.0.0.1", 0)
		if err != nil {
			return err
		}
		port := srv.Addr().(*net.TCPAddr).Port
		r, w, err := OpenConnection(at, "", port)
		if err != nil {
			return fmt.Errorf("host \"\" with a port: %v", err)
		}
		if peer, _ := w.ExtraInfo("peername").(*net.TCPAddr); peer == nil || !peer.IP.Equal(net.IPv4(127, 0, 0, 1)) || peer.Port != port {
			t.Errorf("peername %v, want 127.0.0.1:%d", w.ExtraInfo("peername"), port)
		}
		_ = w.Write([]byte("hi\n"))
		if line, err := r.ReadLine(at); err != nil || string(line) != "s: hi\n" {
			t.Errorf("echo: %q %v", line, err)
		}
		w.Close()
		leaked, err := callCountingFDs(t, func() error { _, _, err := OpenConnection(at, "", 0); return err })
		var ve *asyncio.ValueError
		if !errors.As(err, &ve) || ve.Msg != "host and port was not specified and no sock specified" {
			t.Errorf("no host, no port: %v", err)
		}
		if len(leaked) > 0 {
			t.Errorf("descriptors left open: %v", leaked)
		}
		_, _, err = OpenConnection(at, "", port, WithTLS(&tls.Config{}))
		if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "server_hostname") {
			t.Errorf("TLS without a host or a ServerName: %v", err)
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
}
