package asyncio

import (
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// A task that calls runtime.Goexit in its eager first step (t.FailNow in
// a test): the Goexit ends the goroutine running the loop too
// (errGoexit's documentation), but the creator, whose goroutine resumed
// the eager task inside CreateTask, did nothing wrong: it stays pending,
// as a task that resumed another in runReady does, instead of failing
// with errGoexit.
func TestProbeSwitch_GoexitInEagerStepLeavesCreatorPending(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var creator *Task[int]
	var exiter *T
	done := make(chan struct{})
	go func() {
		defer close(done)
		creator = CreateTask(l, func(tk *T) (int, error) {
			//asynciovet:ignore unawaitedtask CreateTask does not return: the Goexit ends this goroutine
			CreateTask(tk, func(tk *T) (int, error) {
				exiter = tk
				runtime.Goexit()
				return 0, nil
			}, WithEagerStart())
			return 1, nil
		}, WithName("creator"))
		_ = l.RunUntilComplete(creator)
		t.Error("RunUntilComplete returned: the Goexit did not end the driver")
	}()
	<-done
	if exiter == nil || exiter.Err() != errGoexit {
		t.Errorf("eager task: %v, want errGoexit", exiter)
	}
	if creator.Done() {
		t.Errorf("creator done (%v), want pending: its goroutine only resumed the exiting task", creator.Err())
	}
	mustClose(t, l)
}

// The same from a callback that a task's goroutine runs (runReady runs
// callbacks on the goroutine of the task whose step just ended): that
// task stays pending too.
func TestProbeSwitch_GoexitInEagerStepFromCallbackOnTaskGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var exiter *T
	var host *Task[int]
	done := make(chan struct{})
	go func() {
		defer close(done)
		host = CreateTask(l, func(tk *T) (int, error) {
			l.CallSoon(func() {
				//asynciovet:ignore unawaitedtask CreateTask does not return: the Goexit ends this goroutine
				CreateTask(l, func(tk *T) (int, error) {
					exiter = tk
					runtime.Goexit()
					return 0, nil
				}, WithEagerStart())
			})
			// Parks; its goroutine runs the loop on: the callback.
			if err := Sleep(tk, 0); err != nil {
				return 0, err
			}
			return 1, nil
		}, WithName("host"))
		_ = l.RunUntilComplete(host)
		t.Error("RunUntilComplete returned: the Goexit did not end the driver")
	}()
	<-done
	if exiter == nil || exiter.Err() != errGoexit {
		t.Errorf("eager task: %v, want errGoexit", exiter)
	}
	if host.Done() {
		t.Errorf("host done (%v), want pending: its goroutine only ran the callback", host.Err())
	}
	mustClose(t, l)
}

// Eager steps nest: A creates B eagerly, whose first step creates C
// eagerly, which calls runtime.Goexit. The Goexit goes through B's
// goroutine, then A's: both stay pending, C alone fails with errGoexit;
// a later task's own Goexit (after a new run) fails that task.
func TestProbeSwitch_GoexitThroughNestedEagerSteps(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var b, c *T
	var a *Task[int]
	run := func(fn func()) {
		done := make(chan struct{})
		go func() { defer close(done); fn() }()
		<-done
	}
	run(func() {
		a = CreateTask(l, func(tk *T) (int, error) {
			//asynciovet:ignore unawaitedtask CreateTask does not return: the Goexit ends this goroutine
			CreateTask(tk, func(tk *T) (int, error) {
				b = tk
				//asynciovet:ignore unawaitedtask CreateTask does not return: the Goexit ends this goroutine
				CreateTask(tk, func(tk *T) (int, error) {
					c = tk
					runtime.Goexit()
					return 0, nil
				}, WithEagerStart())
				return 0, nil
			}, WithEagerStart())
			return 0, nil
		})
		_ = l.RunUntilComplete(a)
	})
	if a.Done() || b == nil || b.Done() || c == nil || c.Err() != errGoexit {
		t.Errorf("A done %v, B done %v, C's error %v; want pending, pending, errGoexit", a.Done(), b != nil && b.Done(), c)
	}
	var d *Task[int]
	run(func() {
		d = CreateTask(l, func(tk *T) (int, error) { runtime.Goexit(); return 0, nil })
		_ = l.RunUntilComplete(d)
	})
	if d.Err() != errGoexit {
		t.Errorf("D's error %v, want errGoexit", d.Err())
	}
	mustClose(t, l)
}
