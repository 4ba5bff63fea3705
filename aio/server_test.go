//go:build unix

package aio

import (
	"errors"
	"fmt"
	"strings"
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
