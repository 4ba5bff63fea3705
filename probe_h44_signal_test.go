//go:build linux

package asyncio

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

// A signal handler with signals arriving while the loop closes, at every
// moment: a foreign goroutine sends SIGWINCH (whose default action is to
// ignore it, so one arriving after Close does no harm) until told to
// stop; main waits for a few deliveries and removes the handler, or Close
// comes first. After Close no goroutine of the loop's signal watch is
// left, the handler ran no more often than signals were sent, and the
// next loop can handle the signal again.
func TestH44_SignalsArrivingWhileTheLoopCloses(t *testing.T) {
	h44CloseAtEach(t, 400, nil, func(tk *T, r *h44Run) error {
		l := tk.Loop()
		var sent, handled atomic.Int64
		got := make(chan struct{}, 1)
		if err := l.AddSignalHandler(syscall.SIGWINCH, func() {
			handled.Add(1)
			select {
			case got <- struct{}{}:
			default:
			}
		}); err != nil {
			return err
		}
		quit := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-quit:
					return
				default:
				}
				if syscall.Kill(os.Getpid(), syscall.SIGWINCH) == nil {
					sent.Add(1)
				}
				runtime.Gosched()
			}
		}()
		r.onEnd(func(t *testing.T) {
			close(quit)
			<-done
			if handled.Load() > sent.Load() {
				t.Errorf("the handler ran %d times for %d signals", handled.Load(), sent.Load())
			}
			// The next loop gets the signal again.
			l2 := NewLoop()
			defer func() {
				if err := l2.Close(); err != nil {
					t.Error(err)
				}
			}()
			if err := l2.AddSignalHandler(syscall.SIGWINCH, func() {}); err != nil {
				t.Errorf("AddSignalHandler on the next loop: %v", err)
			}
		})
		for i := 0; i < 3; i++ {
			if _, _, err := Recv(tk, got); err != nil {
				return err
			}
		}
		if ok, err := l.RemoveSignalHandler(syscall.SIGWINCH); !ok || err != nil {
			return fmt.Errorf("RemoveSignalHandler: %v, %v", ok, err)
		}
		return nil
	})
	signal.Reset(syscall.SIGWINCH)
}
