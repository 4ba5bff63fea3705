//go:build unix

package aio

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A loop on virtual time whose tasks all wait on simulated sockets, with
// no timer and no outside work, can never be woken: the network moves
// bytes only in the loop's own callbacks and timers. The loop reports
// ErrDeadlock, with its tasks, as it does when its tasks wait on nothing
// at all; it waited on its selector for ever (the stall report of
// outside work fired, for work that was not there). Here a server and its
// client both read first.
func TestSimAllTasksWaitingOnTheNetworkIsADeadlock(t *testing.T) {
	clean(t)
	for _, link := range []LinkConfig{{}, {Latency: time.Millisecond, Jitter: time.Millisecond}} {
		l := asyncio.NewTestLoop()
		var srv *Server
		main := asyncio.CreateTask(l, func(tk *asyncio.T) (string, error) {
			n := NewSimNetwork(tk, 1)
			n.SetDefaultLink(link)
			s, err := StartServer(tk, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
				defer w.Close()
				_, err := r.ReadLine(st) // waits for a request the client never sends
				return err
			}, "server", 80, WithNetwork(n.Host("server")))
			if err != nil {
				return "", err
			}
			srv = s
			r, w, err := OpenConnection(tk, "server", 80, WithNetwork(n.Host("client")))
			if err != nil {
				return "", err
			}
			defer w.Close()
			line, err := r.ReadLine(tk) // waits for a greeting the server never sends
			return string(line), err
		})
		done := make(chan error, 1)
		go func() { done <- l.RunUntilComplete(main) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second): // a guard: the loop hangs without the fix
			_, _ = l.CallSoonThreadsafe(func() { main.Cancel("hung") })
			err = <-done
			t.Errorf("link %+v: the loop waited for ever on the simulated network at virtual time %v", link, l.Time())
		}
		var de *asyncio.DeadlockError
		if !errors.Is(err, asyncio.ErrDeadlock) || !errors.As(err, &de) {
			t.Errorf("link %+v: RunUntilComplete = %v, want ErrDeadlock", link, err)
		} else if n := len(de.Snapshot.Tasks); n < 2 {
			t.Errorf("link %+v: the deadlock report lists %d tasks, want main and the server's connection task:\n%s", link, n, de.Error())
		}
		main.Cancel("cleanup")
		if srv != nil {
			srv.Close()
			srv.AbortClients()
		}
		if err := l.RunUntilComplete(main); err != nil && !asyncio.IsCancelled(err) {
			t.Errorf("link %+v: after the cancel: %v", link, err)
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}
}

// A server's WaitClosed that waits for a connection whose handler
// returned without closing its writer is not a deadlock: the writer's
// cleanup closes the connection (STREAM-11, writer_cleanup.go), from the
// runtime's cleanup goroutine after the collection WaitClosed runs. The
// loop expects that close as outside work; without it, a loop whose
// descriptors were all simulated found nothing to wait for in the moment
// before the cleanup's callback arrived, and reported ErrDeadlock. With
// one P, the cleanup goroutine runs only once the loop blocks, so the
// loop always looks before the callback has arrived.
func TestSimWaitClosedForACollectedWriterIsNotADeadlock(t *testing.T) {
	clean(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for i := range 5 {
		_, err := asyncio.Run(func(tk *asyncio.T) (struct{}, error) {
			n := NewSimNetwork(tk, uint64(i))
			s, err := StartServer(tk, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
				_, err := r.ReadLine(st)
				return err // the writer is left to the collector, as a Python handler may leave it
			}, "server", 80, WithNetwork(n.Host("server")))
			if err != nil {
				return struct{}{}, err
			}
			r, w, err := OpenConnection(tk, "server", 80, WithNetwork(n.Host("client")))
			if err != nil {
				return struct{}{}, err
			}
			defer w.Close()
			w.Write([]byte("hello\n"))
			if err := w.Drain(tk); err != nil {
				return struct{}{}, err
			}
			if err := asyncio.Sleep(tk, time.Millisecond); err != nil { // the handler has returned
				return struct{}{}, err
			}
			s.Close()
			if err := s.WaitClosed(tk); err != nil {
				return struct{}{}, err
			}
			_, err = r.Read(tk, -1) // the server's side closed: EOF
			return struct{}{}, err
		}, asyncio.WithVirtualTime())
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
}

// A CallSoonThreadsafe callback queued after the iteration drained its
// queue (here from the before-poll hook, which makes the window
// deterministic) is not a deadlock of a loop whose descriptors are all
// simulated: the zero-timeout poll moves it to the ready queue, and the
// loop runs it. It reported ErrDeadlock with the callback queued (the
// ErrDeadlock of TestStartHTTPServerSimulated under load).
func TestSimThreadsafeCallbackQueuedBeforePollIsNotADeadlock(t *testing.T) {
	clean(t)
	runVirtual(t, func(tk *asyncio.T) error {
		n := NewSimNetwork(tk, 1)
		s, err := StartServer(tk, func(st *asyncio.T, r *StreamReader, w *StreamWriter) error {
			w.Close()
			return nil
		}, "server", 80, WithNetwork(n.Host("server")))
		if err != nil {
			return err
		}
		defer s.Close()
		fut := asyncio.NewFuture[string](tk)
		armed := false
		l := tk.Loop()
		l.SetBeforePoll(func() {
			if !armed {
				armed = true
				_, _ = l.CallSoonThreadsafe(func() { fut.SetResult("delivered") })
			}
		})
		defer l.SetBeforePoll(nil)
		got, err := fut.Await(tk)
		if err != nil || got != "delivered" {
			return fmt.Errorf("Await = %q, %v; want the callback's result", got, err)
		}
		return nil
	})
}
