package asyncio

// Retry probe (h17): a *T that is not the running task, and a
// cancellation still pending when an attempt fails.

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Retry with a *T that is not the running task (a callback holding a
// task's handle) is misuse: it must panic before anything starts. Retry
// checked only the calling goroutine, so it ran the first attempt with
// that t: an attempt that succeeded without awaiting returned its value
// and the misuse went unnoticed; one that failed was detected only at the
// backoff's Sleep, after the attempt's effects.
func TestProbeH17_RetryWithATaskNotRunningRunsNoAttempt(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		for _, fail := range []bool{false, true} {
			tk.Loop().CallSoon(func() {
				defer func() {
					var re *RuntimeError
					if err, _ := recover().(error); errors.As(err, &re) {
						r.log("fail=%v: panicked", fail)
					}
				}()
				_, err := Retry(tk, RetryPolicy{MaxAttempts: 2}, func(*T, Attempt) (int, error) {
					r.log("fail=%v: attempt ran", fail)
					if fail {
						return 0, errors.New("x")
					}
					return 1, nil
				})
				r.log("fail=%v: Retry returned %v", fail, err)
			})
			if err := Sleep(tk, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s fail=false: panicked", "0s fail=true: panicked"}, r)
}

// An attempt that fails after its task was cancelled, the cancellation
// still pending: here a Recv whose value moved just as the task was
// cancelled (the value wins and the cancellation is re-armed for the next
// await, chan.go), then the attempt rejects the value. Retry rightly stops
// and returns a *CancelledError caused by the failure, but it left the
// request pending too, so the task's next await — cleanup after handling
// the CancelledError — got a second one for the same request (asyncio
// delivers a request once). The CancelledError Retry returns is that
// delivery, with the request's message.
func TestProbeH17_RetryDeliversAPendingCancellationOnce(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		ch := make(chan int)
		taken := make(chan struct{})
		w := startTask(tk, "w", func(x *T) error {
			_, err := Retry(x, RetryPolicy{MaxAttempts: 3}, func(at *T, a Attempt) (int, error) {
				v, _, err := Recv(at, ch)
				if err != nil {
					return 0, err
				}
				return 0, fmt.Errorf("attempt %d: bad value %d", a.N, v)
			})
			r.log("Retry: %s, cause %v, cancelling=%d", describe(err), errors.Unwrap(err), x.Cancelling())
			r.log("cleanup await: %s", describe(Sleep(x, time.Millisecond)))
			return err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0) // w waits in Recv
		// The helper takes the value while the loop is held, then the
		// cancel comes: the value wins (TestChanValueWinsRaceWithCancel).
		go func() { ch <- 5; close(taken) }()
		<-taken //asynciovet:ignore blockingcall holds the loop on purpose: the helper's answer must not be drained before the cancel
		w.Cancel("stop")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	checkEvents(t, []string{
		`Retry: CancelledError("stop"), cause attempt 1: bad value 5, cancelling=1`,
		"cleanup await: <nil>",
	}, &r)
}
