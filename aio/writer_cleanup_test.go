//go:build unix

package aio

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Handlers that return without closing their writers do not keep
// WaitClosed waiting: each connection is closed once its dropped writer
// is collected, and the peers see EOF (STREAM-11, CPython 3.12+).
func TestSTREAM11_DroppedWritersCloseTheirConnections(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			line, err := r.ReadLine(t)
			if err != nil {
				return err
			}
			return w.Write(append([]byte("echo "), line...)) // and never closes w
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		var readers []*StreamReader
		for _, s := range []string{"a\n", "b\n", "c\n"} {
			r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			defer w.Close()
			w.Write([]byte(s))
			readers = append(readers, r)
		}
		for _, r := range readers {
			line, err := r.ReadLine(at)
			if err != nil {
				return err
			}
			log = append(log, strings.TrimSpace(string(line)))
		}
		srv.Close()
		if err := srv.WaitClosed(at); err != nil {
			return err
		}
		log = append(log, "wait_closed returned")
		for _, r := range readers {
			rest, err := r.Read(at, -1)
			if err != nil {
				return err
			}
			log = append(log, "eof rest="+string(rest))
		}
		return nil
	})
	expectLog(t, []string{"echo a", "echo b", "echo c", "wait_closed returned", "eof rest=", "eof rest=", "eof rest="}, log)
}

// WaitClosed called before the handlers return still returns once they
// do: each returning handler makes the closed server collect.
func TestSTREAM11_WaitClosedBeforeHandlersReturn(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			_, err := r.ReadLine(t)
			return err // never closes w
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		defer w.Close()
		srv.Close()
		waiter := asyncio.CreateTaskErr(at, srv.WaitClosed)
		if err := asyncio.Sleep(at, 0); err != nil {
			return err
		}
		w.Write([]byte("bye\n")) // the handler returns now
		if _, err := waiter.Await(at); err != nil {
			return err
		}
		log = append(log, "wait_closed returned")
		rest, err := r.Read(at, -1)
		log = append(log, "eof rest="+string(rest))
		return err
	})
	expectLog(t, []string{"wait_closed returned", "eof rest="}, log)
}

// A writer the handler keeps elsewhere keeps its connection open after
// the handler returns, through collections, until it is closed.
func TestSTREAM11_KeptWriterKeepsItsConnection(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		var kept []*StreamWriter
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			kept = append(kept, w) // a subscriber list
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		r, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return err
		}
		defer w.Close()
		for len(kept) == 0 {
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
		}
		srv.Close()
		waiter := asyncio.CreateTaskErr(at, srv.WaitClosed)
		for range 3 {
			runtime.GC()
			if err := settle(at); err != nil {
				return err
			}
		}
		kept[0].Write([]byte("still open\n"))
		line, err := r.ReadLine(at)
		if err != nil {
			return err
		}
		log = append(log, strings.TrimSpace(string(line)), "waiting="+boolString(!waiter.Done()))
		kept[0].Close()
		if _, err := waiter.Await(at); err != nil {
			return err
		}
		log = append(log, "wait_closed returned")
		return nil
	})
	expectLog(t, []string{"still open", "waiting=true", "wait_closed returned"}, log)
}

// In debug mode WaitClosed, still waiting after a second, names the
// connections it waits for and what holds each.
func TestSTREAM11_DebugWaitClosedNamesConnections(t *testing.T) {
	var msgs []string
	_, err := asyncio.Run(func(at *asyncio.T) (struct{}, error) {
		at.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msgs = append(msgs, ctx.Message)
		})
		release := asyncio.NewFuture[struct{}](at)
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			defer w.Close()
			_, err := release.Await(t)
			return err
		}, "127.0.0.1", 0)
		if err != nil {
			return struct{}{}, err
		}
		_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
		if err != nil {
			return struct{}{}, err
		}
		defer w.Close()
		at.Loop().CallLater(3*waitClosedReportDelay, func() { release.SetResult(struct{}{}) })
		srv.Close()
		return struct{}{}, srv.WaitClosed(at)
	}, asyncio.WithVirtualTime(), asyncio.WithDebug())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("reports: %q", msgs)
	}
	for _, want := range []string{"WaitClosed is still waiting for 1 connection(s)", "peer 127.0.0.1:", "still running"} {
		if !strings.Contains(msgs[0], want) {
			t.Errorf("report %q lacks %q", msgs[0], want)
		}
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// A writer that nothing else holds stays reachable while a task waits in
// its WaitClosed or Drain: a collection during the wait does not take it,
// so its cleanup does not close the caller's own connection under it.
func TestSTREAM11_WaitingKeepsTheWriter(t *testing.T) {
	for _, method := range []string{"WaitClosed", "Drain"} {
		t.Run(method, func(t *testing.T) {
			runNet(t, func(at *asyncio.T) error {
				fds := socketpair(t, unix.SOCK_STREAM)
				defer unix.Close(fds[1]) // the peer: keeps the connection open, never reads
				waiting := asyncio.NewFuture[weak.Pointer[StreamWriter]](at)
				waiter := asyncio.CreateTaskErr(at, func(t *asyncio.T) error {
					return waitOnUnheldWriter(t, fds[0], method, waiting)
				})
				wp, err := waiting.Await(at)
				if err != nil {
					return err
				}
				if err := asyncio.Sleep(at, 0); err != nil { // the waiter suspends in method
					return err
				}
				runtime.GC()
				w := wp.Value()
				if w == nil {
					return fmt.Errorf("the writer was collected while its %s waited", method)
				}
				if waiter.Done() || w.IsClosing() {
					return fmt.Errorf("%s: done=%v closing=%v after a collection", method, waiter.Done(), w.IsClosing())
				}
				w.Transport().Abort() // ConnectionLost(nil) ends the wait
				_, err = waiter.Await(at)
				return err
			})
		})
	}
}

// waitOnUnheldWriter opens a stream on fd and waits in the writer's
// method, with nothing but that call holding the writer; it hands out a
// weak pointer to it first.
//
//go:noinline
func waitOnUnheldWriter(t *asyncio.T, fd int, method string, waiting *asyncio.Future[weak.Pointer[StreamWriter]]) error {
	_, w, err := OpenUnixConnection(t, "", WithSocket(fd))
	if err != nil {
		return err
	}
	waiting.SetResult(weak.Make(w))
	if method == "Drain" {
		w.Transport().SetWriteBufferLimits(1, 0)
		w.Write(make([]byte, 4<<20)) // more than the socket pair takes
		return w.Drain(t)
	}
	return w.WaitClosed(t)
}
