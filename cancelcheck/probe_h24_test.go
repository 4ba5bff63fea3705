package cancelcheck

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A coroutine that suspends fewer times in a cancellation run than in the
// first (here: on the later runs it returns at once, as one whose path
// depends on the real clock or a map's order may) leaves points untested:
// that is a problem naming where the point was, not an "all good" with
// "( at ):  point not reached" lines.
func TestProbeH24_PointNotReachedIsAProblem(t *testing.T) {
	runs := 0
	r := Check(func(t *asyncio.T, w *Watch) error {
		runs++
		if runs > 1 {
			return nil // a cancellation run: no suspension at all
		}
		if err := asyncio.Sleep(t, ms); err != nil {
			return err
		}
		return asyncio.Sleep(t, ms)
	})
	if r.OK() {
		t.Errorf("OK with untested points:\n%s", r)
	}
	if r.Points != 2 || len(r.Runs) != 3 {
		t.Fatalf("report:\n%s", r)
	}
	for _, run := range r.Runs[1:] {
		if run.Outcome != NotReached || !strings.Contains(run.At, "probe_h24_test.go:") {
			t.Errorf("point %d: outcome %s at %q, want %s at the first run's place", run.Point, run.Outcome, run.At, NotReached)
		}
	}
	s := r.String()
	if !strings.Contains(s, "2 with problems") || strings.Contains(s, "( at )") ||
		!strings.Contains(s, "point 1 (at cancelcheck.TestProbeH24_PointNotReachedIsAProblem.func1 ") ||
		!strings.Contains(s, "PROBLEM: not tested") {
		t.Errorf("report:\n%s", s)
	}
}

// A semaphore created and registered by a task the coroutine starts (as
// structured code does in a TaskGroup child) is counted by that task: the
// registration acquired its units with the main task, which is not the
// running one, and the correct coroutine "failed without any
// cancellation" with a panic.
func TestProbeH24_SemaphoreRegisteredFromAChildTask(t *testing.T) {
	fn := func(leak bool) Func {
		return func(t *asyncio.T, w *Watch) error {
			return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				spawn(g, "child", func(t *asyncio.T) error {
					s := asyncio.NewSemaphore(2)
					w.Semaphore("s", s)
					if err := s.Acquire(t); err != nil {
						return err
					}
					if err := asyncio.Sleep(t, ms); err != nil {
						if leak {
							return err // forgets s.Release()
						}
						_ = s.Release()
						return err
					}
					return s.Release()
				})
				return nil
			})
		}
	}
	if r := Check(fn(false), AllTasks()); !r.OK() || r.Points != 2 {
		t.Errorf("correct coroutine:\n%s", r)
	}
	r := Check(fn(true), AllTasks())
	want := []string{"0: completed", `1: cancelled: Semaphore "s": 1 of 2 units left held`, `2: cancelled: Semaphore "s": 1 of 2 units left held`}
	if got := outcomes(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("leaking coroutine: outcomes %q, want %q", got, want)
	}
}

// MaxRuns with a negative count runs no cancellation, as MaxRuns(0): it
// reported more points skipped than there are points.
func TestProbeH24_NegativeMaxRuns(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error { return asyncio.Sleep(t, ms) }, MaxRuns(-1))
	if r.Points != 1 || len(r.Runs) != 1 || r.Skipped != 1 || !strings.Contains(r.String(), ", 1 points skipped (MaxRuns)") {
		t.Errorf("report:\n%s", r)
	}
}

// A task left running that ignores cancellation and goes on awaiting (a
// loop that drops every error) kept Check waiting for it forever after
// cancelling it: on virtual time, with no end. Check stops waiting, names
// the task as ignoring the cancellation, still checks the primitives, and
// closes the loop under it (its deferred calls run, no goroutine is left).
func TestProbeH24_LeftTaskIgnoringCancellationDoesNotHang(t *testing.T) {
	for _, d := range []time.Duration{0, time.Second} { // bare yields, sleeps
		released := 0
		r := Check(func(t *asyncio.T, w *Watch) error {
			lk := asyncio.NewLock()
			w.Lock("lk", lk)
			//asynciovet:ignore unawaitedtask the task left running is the bug under test
			asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
				if err := lk.Acquire(t); err != nil {
					return 0, err
				}
				defer func() { released++; _ = lk.Release() }()
				//asynciovet:ignore droppedcancel the ignored cancellation is the bug under test
				_ = asyncio.Sleep(t, time.Hour)
				for { // cancelled: goes on waiting
					//asynciovet:ignore droppedcancel the ignored cancellation is the bug under test
					_ = asyncio.Sleep(t, d)
				}
			}, asyncio.WithName("stubborn"))
			return asyncio.Sleep(t, ms)
		})
		if r.OK() || len(r.Runs) != 2 {
			t.Fatalf("sleep %v: report:\n%s", d, r)
		}
		for _, run := range r.Runs {
			if strings.Join(run.Held, ",") != `Lock "lk" left held` ||
				!strings.Contains(strings.Join(run.Problems(), "; "), "left tasks ignore the cancellation (still running after being cancelled): stubborn") {
				t.Errorf("sleep %v: point %d: held %q, problems %q", d, run.Point, run.Held, run.Problems())
			}
		}
		if released != 2 {
			t.Errorf("sleep %v: the stubborn task's deferred call ran %d times, want 2 (once a run)", d, released)
		}
	}
}

// A coroutine that never ends on its own (a worker looping until it is
// cancelled), or a cancellation run that never ends (a retry loop that
// retries the cancellation too), kept Check waiting forever: on virtual
// time the loop only goes on. The run is stopped past a bound of
// suspensions and reported as not ended; the first run not ending leaves
// nothing to count the points by, so no cancellation run follows.
func TestProbeH24_RunsThatDoNotEndAreStopped(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error {
		for {
			if err := asyncio.Sleep(t, time.Second); err != nil {
				return err
			}
		}
	})
	if len(r.Runs) != 1 || r.Runs[0].Outcome != "did not end" ||
		!strings.Contains(strings.Join(r.Runs[0].Problems(), "; "), "the coroutine does not end") {
		t.Errorf("worker looping until cancelled: report:\n%s", r)
	}
	r = Check(func(t *asyncio.T, w *Watch) error {
		op := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, ms) }, asyncio.WithName("op"))
		for {
			if _, err := op.Await(t); err == nil {
				return nil
			}
			//asynciovet:ignore droppedcancel the retried cancellation is the bug under test
			_ = asyncio.Sleep(t, ms) // back off, then retry: the cancelled op fails forever
		}
	})
	if len(r.Runs) != 2 || r.Runs[0].Outcome != Completed || r.Runs[1].Outcome != "did not end" ||
		!strings.Contains(strings.Join(r.Runs[1].Problems(), "; "), "the run does not end: its tasks went on awaiting after the cancellation") {
		t.Errorf("retry loop retrying its cancellation: report:\n%s", r)
	}
}

// The bound is not a false alarm for a coroutine that ends after a long
// virtual time while a task of it ticks (150000 times here): the first
// run's bound on the coroutine's points (100000) is not one on all its
// tasks' suspensions (a million).
func TestProbeH24_TickingTaskIsNotStopped(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error {
		ticker := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			for {
				if err := asyncio.Sleep(t, ms); err != nil {
					return 0, err
				}
			}
		}, asyncio.WithName("ticker"))
		err := asyncio.Sleep(t, 150*time.Second)
		ticker.Cancel()
		if _, aerr := ticker.Await(t); t.Cancelling() > 0 {
			return aerr // this task is cancelled, not only the ticker
		}
		return err
	})
	if !r.OK() || r.Points != 2 {
		t.Errorf("report:\n%s", r)
	}
}

// logTB records what Require reports.
type logTB struct {
	testing.TB
	errors, logs []string
}

func (f *logTB) Helper()           {}
func (f *logTB) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *logTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// Require passing with points skipped by MaxRuns says so: the report
// that says it was never shown, and the untested points passed silently.
func TestProbeH24_RequireLogsSkippedPoints(t *testing.T) {
	fn := func(t *asyncio.T, w *Watch) error {
		for range 5 {
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
		}
		return nil
	}
	ft := &logTB{}
	Require(ft, fn, MaxRuns(2))
	if len(ft.errors) != 0 || len(ft.logs) != 1 || ft.logs[0] != "cancelcheck: 3 of 5 suspension points not tested (MaxRuns)" {
		t.Errorf("errors %q, logs %q", ft.errors, ft.logs)
	}
	ft = &logTB{}
	Require(ft, fn)
	if len(ft.errors) != 0 || len(ft.logs) != 0 {
		t.Errorf("all points tested: errors %q, logs %q", ft.errors, ft.logs)
	}
}

// Task names come from the program: the report quotes them by the
// module's one rule (internal/textquote), in the left tasks and in a
// point's line, so a name cannot forge a line of it (only the deadlock
// summary quoted them).
func TestProbeH24_ReportQuotesTaskNames(t *testing.T) {
	const forged = "kid\n  point 9 (main at x): main cancelled"
	r := Check(func(t *asyncio.T, w *Watch) error {
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			//asynciovet:ignore unawaitedtask the task left running is the problem reported
			asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 0, asyncio.Sleep(t, time.Hour) }, asyncio.WithName(forged))
			spawn(g, forged, func(t *asyncio.T) error { return asyncio.Sleep(t, ms) })
			return nil
		})
	}, AllTasks())
	s := r.String()
	if n := strings.Count(s, "\n"); n != len(r.Runs) || !strings.Contains(s, `left tasks running: "kid\n  point 9`) ||
		!strings.Contains(s, `("kid\n  point 9 (main at x): main cancelled" at `) {
		t.Errorf("%d runs, %d newlines in the report:\n%s", len(r.Runs), n, s)
	}
	// An error's text too.
	r = Check(func(t *asyncio.T, w *Watch) error {
		if err := asyncio.Sleep(t, ms); err != nil {
			return errors.New("stopped\n  point 7 (main at y): main cancelled")
		}
		return nil
	})
	s = r.String()
	if n := strings.Count(s, "\n"); n != len(r.Runs) || !strings.Contains(s, `not a CancelledError: "stopped\n  point 7`) {
		t.Errorf("%d runs, %d newlines in the report:\n%s", len(r.Runs), n, s)
	}
	// A callback's panic value too.
	r = Check(func(t *asyncio.T, w *Watch) error {
		t.Loop().CallSoon(func() { panic("boom\n  point 5 (main at z): main cancelled") })
		return asyncio.Sleep(t, ms)
	})
	s = r.String()
	if n := strings.Count(s, "\n"); n != len(r.Runs) || !strings.Contains(s, `"asyncio: panic: boom\n  point 5`) {
		t.Errorf("%d runs, %d newlines in the report:\n%s", len(r.Runs), n, s)
	}
}

// A leaked goroutine is on the report's line of its run (String: "one
// line each"), named by state, top function and starter: goleak's
// multi-line report with the stacks (kept in Run.Leaked) split the run
// over dozens of lines.
func TestProbeH24_LeakOnOneLine(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	r := Check(func(t *asyncio.T, w *Watch) error {
		if err := asyncio.Sleep(t, ms); err != nil {
			go func() { <-release }()
			return err
		}
		return nil
	})
	s := r.String()
	p := strings.Join(r.Runs[1].Problems(), "; ")
	if n := strings.Count(s, "\n"); n != len(r.Runs) || !strings.Contains(r.Runs[1].Leaked, "\n") ||
		!regexp.MustCompile(`^leaked goroutines: Goroutine \d+ in state chan receive, with github.com/go-asyncio/asyncio/cancelcheck.TestProbeH24_LeakOnOneLine.func1.1 on top of the stack, started by github.com/go-asyncio/asyncio/cancelcheck.TestProbeH24_LeakOnOneLine.func1$`).MatchString(p) {
		t.Errorf("problems %q; report (%d newlines):\n%s", p, n, s)
	}
}

// After a deadlock, the tasks left are cancelled with the same bound: a
// task that ignores that cancellation too and goes on awaiting kept the
// runner's Close (which cancels and waits without end) running forever.
func TestProbeH24_DeadlockedTaskIgnoringCancellationDoesNotHang(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error {
		if err := asyncio.Sleep(t, ms); err != nil {
			//asynciovet:ignore droppedcancel the ignored cancellation is the bug under test
			_, _ = asyncio.NewFuture[int](t).Await(t) // nobody completes it
			for {                                     // cancelled again: goes on waiting
				//asynciovet:ignore droppedcancel the ignored cancellation is the bug under test
				_ = asyncio.Sleep(t, time.Second)
			}
		}
		return nil
	})
	if len(r.Runs) != 2 || r.Runs[1].Outcome != Deadlock ||
		!strings.Contains(strings.Join(r.Runs[1].Problems(), "; "), "left tasks ignore the cancellation (still running after being cancelled): main") {
		t.Errorf("report:\n%s", r)
	}
}
