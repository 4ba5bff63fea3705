package cancelcheck

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const ms = time.Millisecond

// outcomes lists "point: outcome" for each run, and the problems.
func outcomes(r *Report) []string {
	var out []string
	for _, run := range r.Runs {
		line := fmt.Sprintf("%d: %s", run.Point, run.Outcome)
		if p := run.Problems(); len(p) > 0 {
			line += ": " + strings.Join(p, "; ")
		}
		out = append(out, line)
	}
	return out
}

// Check counts the main task's suspension points and cancels it at each
// one; bare yields count too, awaits of done futures do not.
func TestCheck_CancelsAtEveryPoint(t *testing.T) {
	var reached []string
	var line int
	r := Check(func(t *asyncio.T, w *Watch) error {
		done := asyncio.NewFuture[int](t)
		done.SetResult(1)
		reached = append(reached, "start")
		_, _, line, _ = runtime.Caller(0)
		if err := asyncio.Sleep(t, ms); err != nil {
			return err
		}
		if _, err := done.Await(t); err != nil { // does not suspend
			return err
		}
		reached = append(reached, "after sleep")
		if err := asyncio.Sleep(t, 0); err != nil {
			return err
		}
		reached = append(reached, "after yield")
		return nil
	})
	if r.Points != 2 || !r.OK() {
		t.Fatalf("report:\n%s", r)
	}
	want := []string{"0: completed", "1: cancelled", "2: cancelled"}
	if d := cmp.Diff(want, outcomes(r)); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	wantReached := []string{"start", "after sleep", "after yield", "start", "start", "after sleep"}
	if d := cmp.Diff(wantReached, reached); d != "" {
		t.Errorf("runs reached (-want +got):\n%s", d)
	}
	if !strings.HasSuffix(r.Runs[1].At, fmt.Sprintf("cancelcheck_test.go:%d", line+1)) || r.Runs[1].Task != "main" {
		t.Errorf("point 1 at %q, task %q", r.Runs[1].At, r.Runs[1].Task)
	}
}

// Each kind of problem is found: a lock or semaphore left held, a queue
// item taken without TaskDone, a task left running, a goroutine leaked, a
// cancellation swallowed without Uncancel or turned into another error.
func TestCheck_FindsProblems(t *testing.T) {
	leakRelease := make(chan struct{})
	defer close(leakRelease)
	cases := []struct {
		name string
		fn   Func
		want []string
	}{
		{"lock not released on cancel", func(t *asyncio.T, w *Watch) error {
			lk := asyncio.NewLock()
			w.Lock("state", lk)
			if err := lk.Acquire(t); err != nil {
				return err
			}
			if err := asyncio.Sleep(t, ms); err != nil {
				return err // forgets lk.Release()
			}
			return lk.Release()
		}, []string{"0: completed", `1: cancelled: Lock "state" left held`}},
		{"semaphore unit kept", func(t *asyncio.T, w *Watch) error {
			s := asyncio.NewSemaphore(2)
			w.Semaphore("limit", s)
			if err := s.Acquire(t); err != nil {
				return err
			}
			if err := asyncio.Sleep(t, ms); err != nil {
				return err
			}
			return s.Release()
		}, []string{"0: completed", `1: cancelled: Semaphore "limit": 1 of 2 units left held`}},
		{"semaphore released twice", func(t *asyncio.T, w *Watch) error {
			s := asyncio.NewSemaphore(3)
			w.Semaphore("s", s)
			//asynciovet:ignore droppedcancel the swallowed cancellation is deliberate: cancelcheck must report it
			_ = s.Acquire(t)
			defer s.Release()
			if err := asyncio.Sleep(t, ms); err != nil {
				_ = s.Release() // and the deferred one: twice
				return err
			}
			return nil
		}, []string{"0: completed", `1: cancelled: Semaphore "s": released 1 more times than acquired`}},
		{"bounded semaphore unit kept", func(t *asyncio.T, w *Watch) error {
			s := asyncio.NewBoundedSemaphore(1)
			w.BoundedSemaphore("b", s)
			if err := s.Acquire(t); err != nil {
				return err
			}
			if err := asyncio.Sleep(t, ms); err != nil {
				return err
			}
			return s.Release()
		}, []string{"0: completed", `1: cancelled: Semaphore "b": 1 of 1 units left held`}},
		{"queue item without TaskDone", func(t *asyncio.T, w *Watch) error {
			q := asyncio.NewQueue[int](0)
			Queue(w, "jobs", q)
			_ = q.PutNowait(1)
			_ = q.PutNowait(2)
			if _, err := q.Get(t); err != nil {
				return err
			}
			if err := asyncio.Sleep(t, ms); err != nil {
				return err // forgets q.TaskDone()
			}
			return q.TaskDone()
		}, []string{"0: completed", `1: cancelled: Queue "jobs" unbalanced: 1 items taken without TaskDone`}},
		{"task left running", func(t *asyncio.T, w *Watch) error {
			child := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 0, asyncio.Sleep(t, time.Hour) }, asyncio.WithName("orphan"))
			if err := asyncio.Sleep(t, ms); err != nil {
				return err // forgets child
			}
			child.Cancel()
			return nil
		}, []string{"0: completed", "1: cancelled: left tasks running: orphan (waiting on sleep at cancelcheck.TestCheck_FindsProblems.func6.1 FILE:N)"}},
		{"swallowed without Uncancel", func(t *asyncio.T, w *Watch) error {
			//asynciovet:ignore droppedcancel the swallowed cancellation is deliberate: cancelcheck must report it
			_ = asyncio.Sleep(t, ms)
			return nil
		}, []string{"0: completed", "1: swallowed without Uncancel: the task swallowed the cancellation without Uncancel"}},
		{"swallowed with Uncancel", func(t *asyncio.T, w *Watch) error {
			if err := asyncio.Sleep(t, ms); err != nil {
				t.Uncancel()
			}
			return nil
		}, []string{"0: completed", "1: swallowed (uncancelled)"}},
		{"turned into another error", func(t *asyncio.T, w *Watch) error {
			if err := asyncio.Sleep(t, ms); err != nil {
				return fmt.Errorf("sleep: %v", err) // %v, not %w
			}
			return nil
		}, []string{"0: completed", "1: failed: the cancellation became an error that is not a CancelledError: sleep: asyncio: cancelled: cancelcheck: point 1"}},
		{"deadlock after ignoring it", func(t *asyncio.T, w *Watch) error {
			if err := asyncio.Sleep(t, ms); err != nil {
				_, err := asyncio.NewFuture[int](t).Await(t) // nobody completes it
				return err
			}
			return nil
		}, []string{"0: completed", "1: deadlock: deadlock: the loop would block forever: main waits on future; left tasks running: main (waiting on future at cancelcheck.TestCheck_FindsProblems.func10 FILE:N)"}},
		{"goroutine leaked", func(t *asyncio.T, w *Watch) error {
			if err := asyncio.Sleep(t, ms); err != nil {
				go func() { <-leakRelease }()
				return err
			}
			return nil
		}, []string{"0: completed", "1: cancelled: leaked goroutines: "}},
		{"fails without cancellation", func(t *asyncio.T, w *Watch) error {
			return errors.New("broken")
		}, []string{"0: failed: the coroutine fails without any cancellation: broken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := outcomes(Check(c.fn))
			for i := range got {
				got[i] = regexp.MustCompile(`/\S+\.go:\d+`).ReplaceAllString(got[i], "FILE:N")
				if j := strings.Index(got[i], "leaked goroutines: "); j >= 0 {
					got[i] = got[i][:j+len("leaked goroutines: ")] // goleak's text varies
				}
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("outcomes (-want +got):\n%s", d)
			}
		})
	}
}

// In debug mode the loop's swallowed-cancellation report is a problem too.
func TestCheck_DebugModeReportsSwallowedCancellations(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error {
		for range 2 {
			//asynciovet:ignore droppedcancel the swallowed cancellation is deliberate: cancelcheck must report it
			_ = asyncio.Sleep(t, ms) // ignores the error and waits again
		}
		return asyncio.Sleep(t, ms)
	}, WithLoopOptions(asyncio.WithDebug()))
	run := r.Runs[1]
	if len(run.Reported) != 1 || !strings.Contains(run.Reported[0], "awaited again at the same place") {
		t.Errorf("point 1 reported %q, want the swallowed cancellation", run.Reported)
	}
}

// The coroutine under test may set its own exception handler, as ported
// programs often do in main: a callback that panics on the cancellation
// path is still a problem of the run, and the coroutine's handler still
// gets the report. The handler set replaced Check's, which then saw
// nothing: a false pass.
func TestCheck_CallbackPanicSeenUnderTheCoroutinesOwnHandler(t *testing.T) {
	var seen []string
	r := Check(func(t *asyncio.T, w *Watch) error {
		t.Loop().SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			seen = append(seen, ctx.Message)
		})
		err := asyncio.Sleep(t, ms)
		if err != nil {
			t.Loop().CallSoon(func() { panic("cleanup failed") })
		}
		return err
	})
	if len(r.Runs) != 2 {
		t.Fatalf("runs: %d\n%s", len(r.Runs), r)
	}
	run := r.Runs[1]
	if len(run.Reported) != 1 || !strings.Contains(run.Reported[0], "cleanup failed") || r.OK() {
		t.Errorf("point 1 reported %q (OK %v), want the callback's panic\n%s", run.Reported, r.OK(), r)
	}
	if len(seen) != 1 {
		t.Errorf("the coroutine's own handler saw %q, want the panic's report", seen)
	}
}

// AllTasks counts every task's points and cancels the task suspending
// there; CancelMain cancels the main task instead.
func TestCheck_AllTasksAndCancelMain(t *testing.T) {
	fn := func(t *asyncio.T, w *Watch) error {
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			_, err := asyncio.Spawn(g, func(t *asyncio.T) (int, error) { return 0, asyncio.Sleep(t, ms) }, asyncio.WithName("child"))
			return err
		})
	}
	for _, c := range []struct {
		opts []Option
		want []string // "suspended -> cancelled: outcome"
	}{
		{nil, []string{"main -> main: cancelled"}},
		{[]Option{AllTasks()}, []string{"main -> main: cancelled", "child -> child: cancelled"}},
		{[]Option{AllTasks(), CancelMain()}, []string{"main -> main: cancelled", "child -> main: cancelled"}},
	} {
		r := Check(fn, c.opts...)
		var got []string
		for _, run := range r.Runs[1:] {
			got = append(got, fmt.Sprintf("%s -> %s: %s", run.Suspended, run.Task, run.Outcome))
		}
		if d := cmp.Diff(c.want, got); d != "" || !r.OK() {
			t.Errorf("runs (-want +got):\n%s\n%s", d, r)
		}
	}
}

// MaxRuns caps the runs; the report says how many points were skipped.
func TestCheck_MaxRuns(t *testing.T) {
	r := Check(func(t *asyncio.T, w *Watch) error {
		for range 5 {
			if err := asyncio.Sleep(t, 0); err != nil {
				return err
			}
		}
		return nil
	}, MaxRuns(2))
	if r.Points != 5 || len(r.Runs) != 3 || r.Skipped != 3 || !strings.Contains(r.String(), "3 points skipped (MaxRuns)") {
		t.Errorf("report:\n%s", r)
	}
}

// A coroutine whose path changes between runs is noted, not failed.
func TestCheck_NondeterministicPointsAreNoted(t *testing.T) {
	runs := 0
	r := Check(func(t *asyncio.T, w *Watch) error {
		runs++
		if runs == 2 {
			return asyncio.Sleep(t, 2*ms) // the first cancellation run suspends elsewhere
		}
		return asyncio.Sleep(t, ms)
	})
	if len(r.Runs[1].Notes) != 1 || !strings.Contains(r.Runs[1].Notes[0], "in the first run this point was at") {
		t.Errorf("notes %q", r.Runs[1].Notes)
	}
	r = Check(func(t *asyncio.T, w *Watch) error {
		runs++
		if runs > 3 {
			return nil // the cancellation runs never suspend
		}
		return asyncio.Sleep(t, ms)
	})
	if r.Runs[1].Outcome != NotReached {
		t.Errorf("outcome %s, want %s", r.Runs[1].Outcome, NotReached)
	}
}

// Require fails the test with the report when a run has a problem.
func TestRequire_FailsWithTheReport(t *testing.T) {
	ft := &fakeTB{}
	Require(ft, func(t *asyncio.T, w *Watch) error {
		//asynciovet:ignore droppedcancel the swallowed cancellation is deliberate: cancelcheck must report it
		_ = asyncio.Sleep(t, ms)
		return nil
	})
	if len(ft.errors) != 1 || !strings.Contains(ft.errors[0], "PROBLEM: the task swallowed the cancellation without Uncancel") {
		t.Errorf("errors %q", ft.errors)
	}
	ft = &fakeTB{}
	Require(ft, func(t *asyncio.T, w *Watch) error { return asyncio.Sleep(t, ms) })
	if len(ft.errors) != 0 {
		t.Errorf("errors %q for a correct coroutine", ft.errors)
	}
	v := func() (v any) {
		defer func() { v = recover() }()
		Check(nil)
		return nil
	}()
	if _, ok := v.(*asyncio.ValueError); !ok {
		t.Errorf("Check(nil) panicked with %v, want *asyncio.ValueError", v)
	}
}

type fakeTB struct {
	testing.TB
	errors []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }

// A task name that carries a newline cannot add a line to a deadlock
// outcome: it is quoted by the module's one rule (internal/textquote).
func TestDeadlockSummary_QuotesTaskNames(t *testing.T) {
	err := &asyncio.DeadlockError{Snapshot: &asyncio.LoopSnapshot{Tasks: []asyncio.TaskInfo{
		{Name: "x\n└── (T) fake", Awaits: "future"},
	}}}
	got := deadlockSummary(err)
	want := `the loop would block forever: "x\n└── (T) fake" waits on future`
	if got != want {
		t.Errorf("deadlockSummary = %q, want %q", got, want)
	}
}
