package asyncio

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// The runtime resumes a coroutine only from a goroutine in the thread-lock
// state of its creator, and a mismatch is a fatal error ("coro: OS thread
// locking must match"). These tests run loops from locked goroutines
// (runtime.LockOSThread): each scenario crashed the test binary before
// the loop tracked the lock state ("Locked threads" in switch.go).

// onLockedGoroutine runs fn on a goroutine locked to its thread, which
// stays locked when it exits (the runtime then ends the thread).
func onLockedGoroutine(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		fn()
	}()
	<-done
}

// parkedWithCleanup is a task that waits forever and records its deferred
// call.
func parkedWithCleanup(cleaned *bool) func(*T) (int, error) {
	return func(t *T) (int, error) {
		defer func() { *cleaned = true }()
		_, err := NewFuture[int](t).Await(t)
		return 0, err
	}
}

func TestLockedDriver_CloseUnwindsPendingTask(t *testing.T) {
	cleaned, closeErr := false, error(nil)
	var reports []string
	onLockedGoroutine(func() {
		l := NewLoop()
		l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { reports = append(reports, c.Message) })
		//asynciovet:ignore unawaitedtask the task is meant to be pending when the loop closes
		CreateTask(l, parkedWithCleanup(&cleaned))
		if err := l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) })); err != nil {
			closeErr = err
			return
		}
		closeErr = l.Close()
	})
	if closeErr != nil {
		t.Fatal(closeErr)
	}
	if !cleaned {
		t.Error("the pending task's deferred call did not run at Close")
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "destroyed but it is pending") {
		t.Errorf("reports %q, want only the pending task's", reports)
	}
}

func TestLockedDriver_CloseUnwindsTaskThatRecoversTheUnwinding(t *testing.T) {
	var got any
	afterRecover := false
	onLockedGoroutine(func() {
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		//asynciovet:ignore unawaitedtask the task is meant to be pending when the loop closes
		CreateTask(l, func(t *T) (int, error) {
			func() {
				defer func() { got = recover() }()
				//asynciovet:ignore droppedcancel Close unwinds the task here: the test records what recover sees
				_, _ = NewFuture[int](t).Await(t)
			}()
			// The task's code carries on: an await fails at once.
			_, err := NewFuture[int](t).Await(t)
			afterRecover = IsCancelled(err)
			return 1, nil
		})
		_ = l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }))
		_ = l.Close()
	})
	if got == nil || !afterRecover {
		t.Errorf("recovered %v, await after it cancelled: %v; want the unwinding value and true", got, afterRecover)
	}
}

func TestLockedDriver_PooledGoroutinesAcrossLockStates(t *testing.T) {
	l := NewLoop()
	defer l.Close()
	run := func(want int) error {
		tk := CreateTask(l, func(t *T) (int, error) { return want, Sleep(t, 0) })
		if err := l.RunUntilComplete(tk); err != nil {
			return err
		}
		if v, _ := tk.Result(); v != want {
			return errors.New("wrong result")
		}
		return nil
	}
	// Unlocked, then locked, then unlocked again: each run leaves pooled
	// goroutines that the next, in another lock state, must not resume.
	if err := run(1); err != nil {
		t.Fatal(err)
	}
	var lockedErr error
	onLockedGoroutine(func() { lockedErr = run(2) })
	if lockedErr != nil {
		t.Fatal(lockedErr)
	}
	if err := run(3); err != nil {
		t.Fatal(err)
	}
}

func TestRunForever_RefusesTaskStartedOnALockedGoroutine(t *testing.T) {
	l := NewLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	started, release, closed := make(chan *Task[int]), make(chan struct{}), make(chan error)
	go func() {
		runtime.LockOSThread()
		tk := CreateTask(l, func(t *T) (int, error) {
			_, err := NewFuture[int](t).Await(t)
			return 0, err
		})
		_ = l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }))
		started <- tk
		<-release
		closed <- l.Close()
	}()
	parked := <-started
	err := l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, nil }))
	var re *RuntimeError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), parked.Name()) || !strings.Contains(err.Error(), "LockOSThread") {
		t.Errorf("RunUntilComplete from another goroutine: %v, want a *RuntimeError naming %s and LockOSThread", err, parked.Name())
	}
	if l.IsRunning() || parked.Done() {
		t.Errorf("the refused run changed state: running %v, parked task done %v", l.IsRunning(), parked.Done())
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// Closing from another goroutine cannot unwind a task goroutine started
// on a locked one: it is reported, not a crash. The goroutine stays
// parked (Go offers no way to end it), so this runs in a child process.
func TestLockedDriver_CloseFromAnotherGoroutineReports(t *testing.T) {
	out, err := runHelper("locked-close-elsewhere")
	if err != nil || !strings.Contains(out, "cannot be unwound") || !strings.Contains(out, "closed: <nil>") {
		t.Errorf("helper: %v, output %q; want the report and a clean Close", err, out)
	}
}

func init() {
	helperProcesses["locked-close-elsewhere"] = func() int {
		l := NewLoop()
		l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { println(c.Message) })
		onLockedGoroutine(func() {
			//asynciovet:ignore unawaitedtask the task is meant to be pending when the loop closes
			CreateTask(l, func(t *T) (int, error) {
				_, err := NewFuture[int](t).Await(t)
				return 0, err
			})
			_ = l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }))
		})
		println("closed:", errorString(l.Close()))
		return 0
	}
}

func errorString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
