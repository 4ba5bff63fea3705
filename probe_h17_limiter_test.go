package asyncio

// Limiter probe (h17): misuse of AcquireN with a *T that is not the
// running task.

import (
	"errors"
	"testing"
)

// Limiter.AcquireN with a *T that is not the running task (a callback
// holding a task's handle, or another task passing it on) is misuse, and
// misuse must panic before any state changes (DESIGN.md principle 4).
// AcquireN checked only the calling goroutine: on an empty bucket it queued
// a waiter and armed the timer, and only then did the await panic. The
// waiter stayed in the line with nobody behind it, so the next token went
// to it and was lost: the real waiter was served a whole interval late.
// With tokens in the bucket the misuse was not even noticed (it took one).
func TestProbeH17_LimiterAcquireWithATaskNotRunningChangesNothing(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(1, 1)
		misuse := func(what string) {
			tk.Loop().CallSoon(func() {
				defer func() {
					var re *RuntimeError
					if err, _ := recover().(error); !errors.As(err, &re) {
						r.log("%s: no *RuntimeError panic (%v)", what, err)
						return
					}
					r.log("%s: panicked, waiters %d, tokens %.0f", what, lim.Waiters(), lim.Tokens())
				}()
				//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
				_ = lim.Acquire(tk) // tk is suspended in Sleep: not the running task
			})
		}
		misuse("full bucket")
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		if err := lim.Acquire(tk); err != nil {
			return err
		}
		misuse("empty bucket")
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		if err := lim.Acquire(tk); err != nil { // the next token, at 1s
			return err
		}
		st := lim.Stats()
		r.log("acquired; granted=%d waited=%d wakeups=%d", st.Granted, st.Waited, st.Wakeups)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s full bucket: panicked, waiters 0, tokens 1",
		"0s empty bucket: panicked, waiters 0, tokens 0",
		"1s acquired; granted=2 waited=1 wakeups=1",
	}, r)
}
