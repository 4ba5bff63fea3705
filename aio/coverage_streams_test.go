package aio

import (
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// A Drain waiting on a paused transport is woken when the connection is
// lost (asyncio's FlowControlMixin.connection_lost): with nil when the
// transport was aborted locally, with the error when the peer reset the
// connection; a Drain after the loss fails at once (STREAM-9).
func TestSTREAM9_ConnectionLostWakesPendingDrain(t *testing.T) {
	var log []string
	runNet(t, func(at *asyncio.T) error {
		reset := asyncio.NewFuture[struct{}](at.Loop())
		srv, err := StartServer(at, func(t *asyncio.T, r *StreamReader, w *StreamWriter) error {
			// Never reads; on request, aborts with unread data, which
			// makes the kernel send a reset.
			if _, err := reset.Await(t); err != nil {
				return err
			}
			w.Transport().Abort()
			return nil
		}, "127.0.0.1", 0)
		if err != nil {
			return err
		}
		for _, how := range []string{"local abort", "peer reset"} {
			_, w, err := OpenConnection(at, "127.0.0.1", serverPort(srv))
			if err != nil {
				return err
			}
			unix.SetsockoptInt(w.GetExtraInfo("socket").(int), unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
			w.Write(make([]byte, 8<<20))
			drain := asyncio.CreateTask(at, func(t *asyncio.T) (struct{}, error) { return struct{}{}, w.Drain(t) })
			if err := asyncio.Sleep(at, 0); err != nil {
				return err
			}
			log = append(log, fmt.Sprintf("%s: drain pending=%v", how, !drain.Done()))
			if how == "local abort" {
				w.Transport().Abort()
			} else {
				reset.SetResult(struct{}{})
			}
			_, err = asyncio.WaitFor(at, 10*time.Second, drain)
			switch {
			case err == nil:
				log = append(log, how+": drain returned nil")
			case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
				log = append(log, how+": drain returned the reset")
			default:
				log = append(log, fmt.Sprintf("%s: drain returned %v", how, err))
			}
			err = w.Drain(at)
			log = append(log, fmt.Sprintf("%s: later drain fails=%v", how, err != nil))
			w.Close()
		}
		srv.Close()
		return srv.WaitClosed(at)
	})
	want := []string{
		"local abort: drain pending=true",
		"local abort: drain returned nil",
		"local abort: later drain fails=true",
		"peer reset: drain pending=true",
		"peer reset: drain returned the reset",
		"peer reset: later drain fails=true",
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}
