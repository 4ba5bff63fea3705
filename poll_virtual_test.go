package asyncio

import (
	"errors"
	"os"
	"testing"
	"time"
)

// A CallSoonThreadsafe callback that arrives after an iteration drained
// the threadsafe queue, but before the loop decides how long to wait,
// runs at once and at the current virtual time: the loop neither moves
// its clock past it nor waits for outside work (or reports a stall) while
// it sits in the ready queue. The before-poll hook makes the window
// deterministic: it runs after the drain and before the poll. With
// descriptors registered, the zero-timeout poll that virtual time makes
// first drains the queue again; the loop went on to wait as if nothing
// were ready (a 10 s stall of TestStartHTTPServerSimulated under load).

// withIdlePipe registers a reader on a pipe nothing writes to, so that the
// loop polls a selector; it returns the cleanup.
func withIdlePipe(t *testing.T, l *Loop) func() {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fd := int(r.Fd())
	l.AddReader(fd, func() {})
	return func() {
		l.RemoveReader(fd)
		r.Close()
		w.Close()
	}
}

// onceBeforePoll runs fn from the loop's before-poll hook, once.
func onceBeforePoll(l *Loop, fn func()) {
	done := false
	l.SetBeforePoll(func() {
		if !done {
			done = true
			fn()
		}
	})
}

func TestVirtualClockStaysForAThreadsafeCallbackQueuedBeforePoll(t *testing.T) {
	for _, fds := range []bool{false, true} {
		name := map[bool]string{false: "no descriptors", true: "a descriptor registered"}[fds]
		t.Run(name, func(t *testing.T) {
			l := NewLoop(WithVirtualTime())
			defer l.Close()
			if fds {
				defer withIdlePipe(t, l)()
			}
			var at []time.Duration
			l.CallLater(time.Second, func() { at = append(at, l.Time()) })
			main := CreateTask(l, func(tk *T) (struct{}, error) {
				// Armed here, so that it runs when the loop next goes idle.
				onceBeforePoll(l, func() {
					if _, err := l.CallSoonThreadsafe(func() { at = append(at, l.Time()) }); err != nil {
						t.Fatal(err)
					}
				})
				return struct{}{}, Sleep(tk, 2*time.Second)
			})
			if err := l.RunUntilComplete(main); err != nil {
				t.Fatal(err)
			}
			if want := []time.Duration{0, time.Second}; len(at) != 2 || at[0] != want[0] || at[1] != want[1] {
				t.Fatalf("callbacks ran at %v, want %v (the threadsafe one before the clock moves)", at, want)
			}
		})
	}
}

func TestVirtualLoopDoesNotWaitForOutsideWorkWhoseResultIsQueued(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithOutsideGrace(time.Millisecond))
	defer l.Close()
	defer withIdlePipe(t, l)()
	var reports []error
	l.SetExceptionHandler(func(_ *Loop, ctx ExceptionContext) { reports = append(reports, ctx.Err) })
	main := CreateTask(l, func(tk *T) (int, error) {
		fut := NewFuture[int](tk)
		release := l.ExpectExternal()
		onceBeforePoll(l, func() {
			// As the last step of outside work: its result, then release.
			if _, err := l.CallSoonThreadsafe(func() { fut.SetResult(7); release() }); err != nil {
				t.Fatal(err)
			}
		})
		return fut.Await(tk)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if v, _ := main.Result(); v != 7 {
		t.Fatalf("result %d, want 7", v)
	}
	for _, err := range reports {
		if errors.Is(err, ErrStalled) {
			t.Fatalf("the loop waited for outside work whose result was in its ready queue: %v", err)
		}
	}
	if len(reports) > 0 {
		t.Fatalf("unexpected reports: %v", reports)
	}
}
