package asyncio

// A cancellation that arrives after an operation outside the loop has
// completed (its future is done, the task's wakeup queued) must not lose
// the operation's outcome (issue 19 item 1): the task gets the outcome,
// and the cancellation at its next await.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// waitOutsideDone yields until no outside work is in flight: the helper's
// answer has been delivered to the awaited future, and the waiting task's
// wakeup is queued but has not run.
func waitOutsideDone(tk *T) {
	for tk.Loop().Stats().External > 0 {
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
	}
}

// outsideRace runs op in a task w, lets outside (a goroutine) complete the
// operation, waits until the outcome is delivered, cancels w and returns
// the log: what op returned, and what w's next await returned.
func outsideRace(t *testing.T, op func(x *T) (string, error), outside func()) []string {
	t.Helper()
	var r eventLog
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "w", func(x *T) error {
			got, err := op(x)
			r.log("op: %s %s, cancelling=%d", got, describe(err), x.Cancelling())
			err = Sleep(x, 0)
			r.log("next await: %s", describe(err))
			return err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // w waits in op
		if outside != nil {
			go outside()
		}
		waitOutsideDone(tk)
		r.log("cancel: %v", w.Cancel("late"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	return r.snapshot()
}

func TestRecvCancelledAfterValueMoved(t *testing.T) {
	ch := make(chan int)
	got := outsideRace(t, func(x *T) (string, error) {
		v, ok, err := Recv(x, ch)
		return fmtVal(v, ok), err
	}, func() { ch <- 42 })
	checkLines(t, []string{"cancel: true", "op: 42 true <nil>, cancelling=1", `next await: CancelledError("late")`}, got)
}

func TestSendCancelledAfterValueMoved(t *testing.T) {
	ch := make(chan int)
	recv := make(chan int, 1)
	got := outsideRace(t, func(x *T) (string, error) {
		return "sent", Send(x, ch, 42)
	}, func() { recv <- <-ch })
	checkLines(t, []string{"cancel: true", "op: sent <nil>, cancelling=1", `next await: CancelledError("late")`}, got)
	if v := <-recv; v != 42 {
		t.Fatalf("the receiver got %d", v)
	}
}

func TestGoCancelledAfterResultReady(t *testing.T) {
	got := outsideRace(t, func(x *T) (string, error) {
		return Go(x, func(context.Context) (string, error) { return "done", nil })
	}, nil)
	checkLines(t, []string{"cancel: true", "op: done <nil>, cancelling=1", `next await: CancelledError("late")`}, got)
}

func TestToThreadCancelledAfterResultReady(t *testing.T) {
	got := outsideRace(t, func(x *T) (string, error) {
		return ToThread(x, func(context.Context) (string, error) { return "done", nil })
	}, nil)
	checkLines(t, []string{"cancel: true", "op: done <nil>, cancelling=1", `next await: CancelledError("late")`}, got)
}

// The outcome is delivered whether it is a value or an error: a Go call
// that failed reports its error, not a cancellation.
func TestGoErrorCancelledAfterReady(t *testing.T) {
	got := outsideRace(t, func(x *T) (string, error) {
		return Go(x, func(context.Context) (string, error) { return "", errors.New("disk full") })
	}, nil)
	checkLines(t, []string{"cancel: true", `op:  *errors.errorString("disk full"), cancelling=1`, `next await: CancelledError("late")`}, got)
}

// A plain future keeps asyncio's rule (Task.__step with _must_cancel set):
// completed, then its awaiting task cancelled before it resumed, the await
// returns the CancelledError and the result stays in the future.
func TestPlainFutureCancelledAfterResultKeepsAsyncioRule(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		fut := NewFuture[int](tk)
		w := startTask(tk, "w", func(x *T) error {
			v, err := fut.Await(x)
			r.log("await: %d %s", v, describe(err))
			return nil
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		_ = fut.SetResult(7)
		w.Cancel("late")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	checkEvents(t, []string{`await: 0 CancelledError("late")`}, &r)
}

// Polling a channel with a short timeout loses no value: every value the
// producer sent is received exactly once.
func TestRecvPollingWithWaitForLosesNothing(t *testing.T) {
	const n = 3000
	ch := make(chan int)
	var got []int
	timeouts := 0
	runVirtual(t, func(tk *T) error {
		go func() {
			for i := range n {
				ch <- i
			}
			close(ch)
		}()
		for {
			v, err := WaitForFunc(tk, time.Millisecond, func(x *T) (int, error) {
				v, ok, err := Recv(x, ch)
				if err == nil && !ok {
					return -1, nil
				}
				return v, err
			})
			switch {
			case errors.Is(err, ErrTimeout):
				timeouts++
				continue
			case err != nil:
				return err
			case v < 0:
				return nil
			}
			got = append(got, v)
		}
	})
	if len(got) != n {
		t.Fatalf("received %d of %d values (%d timeouts)", len(got), n, timeouts)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("value %d is %d", i, v)
		}
	}
}

func fmtVal(v int, ok bool) string {
	if !ok {
		return "closed"
	}
	return fmt.Sprintf("%d true", v)
}

// A Go call whose function has returned, its outcome still queued for the
// loop when the task is cancelled: the outcome is returned, not dropped.
func TestGoCancelledWhileResultQueued(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		returning := make(chan struct{})
		w := startTask(tk, "w", func(x *T) error {
			v, err := Go(x, func(context.Context) (string, error) { close(returning); return "done", nil })
			r.log("go: %s %s, cancelling=%d", v, describe(err), x.Cancelling())
			err = Sleep(x, 0)
			r.log("next await: %s", describe(err))
			return err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // w waits in Go
		// Hold the loop until the outcome is queued: the signal is the
		// queue itself, not a sleep.
		<-returning //asynciovet:ignore blockingcall holds the loop on purpose: the outcome must not be drained before the cancel
		for queued := false; !queued; {
			l.threadsafeMu.Lock() //asynciovet:ignore blockingcall the loop's own queue lock, held for a read: the test's signal
			queued = len(l.threadsafePending) > 0
			l.threadsafeMu.Unlock()
			runtime.Gosched()
		}
		r.log("cancel: %v", w.Cancel("late"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	checkEvents(t, []string{"cancel: true", "go: done <nil>, cancelling=1", `next await: CancelledError("late")`}, &r)
}
