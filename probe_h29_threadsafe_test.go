package asyncio

// Hostile probe h29: a ConcurrentFuture whose source finished is never
// failed as if the loop had closed before it finished.

import (
	"errors"
	"testing"
)

// The coroutine of RunCoroutineThreadsafe (or the awaitable of Threadsafe)
// finishes, and the loop stops before the done callback that copies its
// outcome to the ConcurrentFuture runs; then the loop is closed. The
// coroutine did finish: the goroutine waiting on the ConcurrentFuture
// gets its value, not an error saying the loop closed first (as a
// cross-loop call whose remote task finished just before its loop closed
// gets that task's outcome). It failed with ErrLoopClosed.
func TestH29_ConcurrentFutureOfAFinishedSourceGetsItsOutcomeAtClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(l *Loop) *ConcurrentFuture[int]
	}{
		{"RunCoroutineThreadsafe", func(l *Loop) *ConcurrentFuture[int] {
			return RunCoroutineThreadsafe(l, func(tk *T) (int, error) {
				tk.Loop().Stop() // the done callbacks run next iteration: never
				return 42, nil
			})
		}},
		{"Threadsafe", func(l *Loop) *ConcurrentFuture[int] {
			f := NewFuture[int](l)
			cf := Threadsafe[int](f)
			l.CallSoon(func() {
				l.CallSoon(func() { // after the chain exists
					f.SetResult(42)
					l.Stop()
				})
			})
			return cf
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewTestLoop()
			cf := tc.make(l)
			if err := l.RunForever(); err != nil {
				t.Fatal(err)
			}
			if cf.Done() {
				t.Fatal("the outcome was copied before the loop stopped: the probe missed its window")
			}
			mustClose(t, l)
			v, err := cf.Result()
			if err != nil || v != 42 {
				t.Fatalf("Result after Close: %d, %v (loop closed: %v); want 42, nil", v, err, errors.Is(err, ErrLoopClosed))
			}
		})
	}
}
