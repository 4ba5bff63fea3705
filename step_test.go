package asyncio

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestTaskPanicBecomesPanicError(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(t *T) (int, error) {
		Sleep(t, 0)
		panicInTask()
		return 0, nil
	})
	other := CreateTask(l, func(t *T) (int, error) { Sleep(t, time.Second); return 2, nil })
	err := l.RunUntilComplete(tk)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "task panic value" {
		t.Fatalf("err = %#v, want *PanicError", err)
	}
	if !strings.Contains(string(pe.Stack), "panicInTask") {
		t.Errorf("stack does not show the panic site:\n%s", pe.Stack)
	}
	if err := l.RunUntilComplete(other); err != nil {
		t.Errorf("the loop must go on after a task panic: %v", err)
	}
	boom := errors.New("wrapped")
	tk2 := CreateTask(l, func(*T) (int, error) { panic(boom) })
	if err := l.RunUntilComplete(tk2); !errors.Is(err, boom) {
		t.Errorf("panic(err) should unwrap to err, got %v", err)
	}
}

func panicInTask() { panic("task panic value") }

// A runtime.Goexit in a task (what t.FailNow does) fails the task and, as
// iter.Pull propagates it, also ends the goroutine running the loop — in a
// test, that fails the test, which is what FailNow means. The loop is left
// not running, so it can be closed.
func TestTaskGoexitFailsTaskAndEndsLoopGoroutine(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(t *T) (int, error) {
		Sleep(t, 0)
		runtime.Goexit()
		return 0, nil
	})
	returned := false
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		l.RunUntilComplete(tk)
		returned = true
	}()
	<-exited
	if returned {
		t.Error("RunUntilComplete returned; want the Goexit to end the loop's goroutine")
	}
	if err := tk.Err(); !errors.Is(err, errGoexit) {
		t.Errorf("task error = %v, want errGoexit", err)
	}
	if l.IsRunning() {
		t.Error("loop still marked running")
	}
}

func TestBadInput_AwaitWithTaskThatIsNotRunning(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	handlerLog(l, &r)
	f := NewFuture[int](l)
	var saved *T
	tk := CreateTask(l, func(t *T) (int, error) { saved = t; return f.Await(t) }, WithName("victim"))
	runOne(t, l)
	// From the test goroutine, outside the loop.
	v := mustPanic(t, "Await outside the loop", func() { f.Await(saved) })
	r.log("outside: %v", v)
	// From a plain callback.
	l.CallSoon(func() {
		v := mustPanic(t, "Await in a callback", func() { Sleep(saved, 0) })
		r.log("callback: %v", v)
	})
	runOne(t, l)
	// With another task's handle.
	other := CreateTask(l, func(*T) (int, error) {
		v := mustPanic(t, "Await with another task's T", func() { f.Await(saved) })
		r.log("other task: %v", v)
		return 0, nil
	})
	if err := l.RunUntilComplete(other); err != nil {
		t.Fatal(err)
	}
	want := `asyncio: await with task "victim", which is not the running task (awaiting outside a task, from a callback or from another goroutine?)`
	checkEvents(t, []string{"outside: " + want, "callback: " + want, "other task: " + want}, &r)
	tk.Cancel()
	l.RunUntilComplete(tk)
}

// closeUnwinding runs body as a task until it is suspended, closes the
// loop, and returns the log: Close must return (issue 11, breakage 1: a
// recover() in the task's code used to catch the unwinding and spin), every
// deferred call must have run, and no goroutine may be left.
func closeUnwinding(t *testing.T, body func(tk *T, r *eventLog) error) []string {
	t.Helper()
	l := NewTestLoop()
	var r eventLog
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {}) // "destroyed but pending" is expected
	startTask(l, "main", func(tk *T) error {
		defer r.log("main deferred")
		return body(tk, &r)
	})
	l.CallLater(time.Minute, l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	r.log("closed")
	goleak.VerifyNone(t)
	return r.snapshot()
}

func TestCloseUnwindsTaskSuspendedInTaskGroupBody(t *testing.T) {
	got := closeUnwinding(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(t *T) (int, error) {
				defer r.log("child deferred")
				return 0, Sleep(t, time.Hour)
			})
			defer r.log("body deferred")
			return Sleep(tk, time.Hour)
		})
	})
	slices.Sort(got[:3]) // the order of the two tasks' unwinding is unspecified
	checkLines(t, []string{"body deferred", "child deferred", "main deferred", "closed"}, got)
}

func TestCloseUnwindsTaskWaitingForTaskGroupChildren(t *testing.T) {
	got := closeUnwinding(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
			return nil // the group now waits for the child in its exit
		})
	})
	checkLines(t, []string{"main deferred", "closed"}, got)
}

func TestCloseUnwindsTaskInNestedTimeoutAndWaitFor(t *testing.T) {
	got := closeUnwinding(t, func(tk *T, r *eventLog) error {
		return Timeout(tk, time.Hour, func(*TimeoutScope) error {
			defer r.log("timeout body deferred")
			_, err := WaitForFunc(tk, time.Hour, func(t *T) (int, error) {
				defer r.log("wait_for body deferred")
				return 0, Sleep(t, 2*time.Hour)
			})
			return err
		})
	})
	checkLines(t, []string{"wait_for body deferred", "timeout body deferred", "main deferred", "closed"}, got)
}

func TestCloseUnwindsPastUserRecover(t *testing.T) {
	got := closeUnwinding(t, func(tk *T, r *eventLog) error {
		for i := 0; ; i++ {
			func() {
				defer func() {
					if p := recover(); p != nil {
						r.log("recovered %v", p)
					}
				}()
				if i > 0 {
					r.log("carried on after the unwinding")
				}
				Sleep(tk, time.Hour)
			}()
		}
	})
	checkLines(t, []string{"main deferred", "closed"}, got)
}

// Awaits in deferred calls return a CancelledError at once while Close
// unwinds a task (TASK-9); the core's own retry loops must not spin on it.
func TestCloseUnwindsDeferredTaskGroupAndConditionWait(t *testing.T) {
	got := closeUnwinding(t, func(tk *T, r *eventLog) error {
		lock := NewLock()
		cond := NewCondition(lock)
		if err := lock.Acquire(tk); err != nil {
			return err
		}
		startTask(tk, "waiter", func(t *T) error { return lock.Acquire(t) })
		Sleep(tk, 0) // the waiter queues on the lock
		defer func() {
			err := TaskGroup(tk, func(g *Group) error {
				Spawn(g, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
				return nil
			})
			r.log("deferred TaskGroup: %s", describe(err))
		}()
		defer func() {
			// Wait releases the lock to the queued waiter, then its
			// re-acquire loop retries on cancellation: the waiter will
			// never run again to pass the lock on.
			r.log("deferred Condition.Wait: %s", describe(cond.Wait(tk)))
		}()
		return Sleep(tk, time.Hour)
	})
	checkLines(t, []string{
		`deferred Condition.Wait: CancelledError("event loop closed while the task was pending")`,
		`deferred TaskGroup: CancelledError("event loop closed while the task was pending")`,
		"main deferred", "closed",
	}, got)
}
