package asyncio

// Retry probe (h17): a *T that is not the running task, and a
// cancellation still pending when an attempt fails.

import (
	"errors"
	"testing"
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
