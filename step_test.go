package asyncio

import (
	"errors"
	"fmt"
	"go.uber.org/goleak"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTaskPanicBecomesPanicError(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(t *T) (int, error) {
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(t, 0)
		panicInTask()
		return 0, nil
	})
	//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
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
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
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

// A task resumed directly by another task's goroutine (runReady's one
// switch instead of two) that ends with runtime.Goexit fails alone: the
// resuming task's goroutine is ended by the Goexit too, but that task
// stays pending (its outcome is not errGoexit), and Close reports it.
func TestTaskGoexitInATaskResumedByAnother(t *testing.T) {
	l := NewTestLoop()
	var reports []string
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) { reports = append(reports, c.Message) })
	var resumedBy *T
	// The first iteration runs resumer's step, then exiting's: resumer's
	// step ends with exiting's next, so resumer's goroutine resumes it.
	resumer := CreateTask(l, func(t *T) (int, error) {
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(t, 0)
		_, err := NewFuture[int](t).Await(t)
		return 0, err
	}, WithName("resumer"))
	exiting := CreateTask(l, func(t *T) (int, error) {
		if n := len(l.resumers); n > 0 {
			resumedBy = l.resumers[n-1]
		}
		runtime.Goexit()
		return 0, nil
	}, WithName("exiting"))
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		l.RunUntilComplete(resumer)
	}()
	<-exited
	if resumedBy != resumer.T() {
		t.Fatalf("exiting was resumed by %v, want by resumer's goroutine", resumedBy)
	}
	if err := exiting.Err(); !errors.Is(err, errGoexit) {
		t.Errorf("exiting task: %v, want errGoexit", err)
	}
	if resumer.Done() {
		t.Errorf("resumer is done (%v); want it pending", resumer.Err())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "destroyed but it is pending") {
		t.Errorf("reports %q, want the pending resumer's", reports)
	}
}

// Tasks handing control to one another through futures switch once per
// handoff: the task whose step ends resumes the next one itself, and a
// task gives control straight back to the one that resumed it when that
// one's step is next. The outcome and every step are as with the driver
// resuming each task (the conformance suite checks the orders).
func TestNestedResumes_RoundRobin(t *testing.T) {
	var order []string
	maxDepth := 0
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		step := func(name string) {
			order = append(order, name)
			maxDepth = max(maxDepth, len(l.resumers))
		}
		// Five tasks in a ring: each wakes the next, then waits for its
		// turn.
		const n, rounds = 5, 3
		futs := make([]*Future[int], n)
		for i := range futs {
			futs[i] = NewFuture[int](tk)
		}
		tasks := make([]*Task[int], n)
		for i := range n {
			tasks[i] = CreateTask(tk, func(t *T) (int, error) {
				for r := range rounds {
					if i > 0 || r > 0 {
						if _, err := futs[i].Await(t); err != nil {
							return 0, err
						}
						futs[i] = NewFuture[int](t)
					}
					step(fmt.Sprintf("%d.%d", i, r))
					futs[(i+1)%n].SetResult(r)
				}
				return i, nil
			})
		}
		for _, task := range tasks {
			if _, err := task.Await(tk); err != nil {
				return err
			}
		}
		var want []string
		for r := range rounds {
			for i := range n {
				want = append(want, fmt.Sprintf("%d.%d", i, r))
			}
		}
		if fmt.Sprint(order) != fmt.Sprint(want) {
			t.Errorf("order %v, want %v", order, want)
		}
		return nil
	})
	if maxDepth == 0 || maxDepth > maxNestedResumes {
		t.Errorf("deepest nesting %d, want 1..%d", maxDepth, maxNestedResumes)
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
	//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
	v := mustPanic(t, "Await outside the loop", func() { f.Await(saved) })
	r.log("outside: %v", v)
	// From a plain callback.
	l.CallSoon(func() {
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		v := mustPanic(t, "Await in a callback", func() { Sleep(saved, 0) })
		r.log("callback: %v", v)
	})
	runOne(t, l)
	// With another task's handle.
	other := CreateTask(l, func(*T) (int, error) {
		//asynciovet:ignore wronghandle,droppedcancel awaiting with another task handle is the misuse under test: it must panic
		v := mustPanic(t, "Await with another task's T", func() { f.Await(saved) })
		r.log("other task: %v", v)
		return 0, nil
	})
	if err := l.RunUntilComplete(other); err != nil {
		t.Fatal(err)
	}
	want := func(op string) string {
		return op + ` with task "victim", which is not the running task (awaiting outside a task, or from a callback?)`
	}
	checkEvents(t, []string{"outside: " + want("Future.Await"), "callback: " + want("Sleep"), "other task: " + want("Future.Await")}, &r)
	tk.Cancel()
	l.RunUntilComplete(tk)
}

// Bad input (issue 11 item 8): a nil *T, a nil awaitable (nil interface or
// nil pointer), a nil loop owner or a nil function panics with a
// *ValueError that names the call and the mistake, not a nil dereference,
// and before anything changes.
func TestBadInput_NilTaskAwaitableOwnerOrFunction(tt *testing.T) {
	l := NewTestLoop()
	defer mustClose(tt, l)
	var r eventLog
	var nilT *T
	var nilFut *Future[int]
	var nilTask *Task[int]
	var nilLoop *Loop
	var nilGroup *Group
	body := func(*T) (int, error) { return 0, nil }
	main := startTask(l, "main", func(t *T) error {
		fut := NewFuture[int](t)
		child := CreateTask(t, body)
		before := l.Stats()
		for _, c := range []struct {
			name string
			call func()
		}{
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Sleep(nil, d)", func() { Sleep(nil, time.Second) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"fut.Await(nil)", func() { fut.Await(nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"task.Await(nil)", func() { child.Await(nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"t.Await(nil)", func() { t.Await(nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"t.Await(nil *Future)", func() { t.Await(nilFut) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"t.Await(nil *Task)", func() { t.Await(nilTask) }},
			{"Gather(t, fut, nil)", func() { Gather[int](t, fut, nil) }},
			{"GatherAny(t, nil *T)", func() { GatherAny(t, nilT) }},
			{"Gather(nil, fut)", func() { Gather[int](nil, fut) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"WaitFor(t, d, nil)", func() { WaitFor[int](t, time.Second, nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"WaitForFunc(t, d, nil)", func() { WaitForFunc[int](t, time.Second, nil) }},
			{"Shield(nil)", func() { Shield[int](nil) }},
			{"Shield(nil *Future)", func() { Shield[int](nilFut) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Wait(t, [fut, nil])", func() { Wait(t, []Awaitable{fut, nil}, Never, AllCompleted) }},
			{"AsCompleted(t, [nil])", func() { AsCompleted(t, []Awaitable{nil}, Never) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Timeout(nil, d, body)", func() { Timeout(nil, time.Second, func(*TimeoutScope) error { return nil }) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Timeout(t, d, nil)", func() { Timeout(t, time.Second, nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"TaskGroup(nil, body)", func() { TaskGroup(nil, func(*Group) error { return nil }) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"TaskGroup(t, nil)", func() { TaskGroup(t, nil) }},
			{"Spawn(nil, fn)", func() { Spawn(nilGroup, body) }},
			//asynciovet:ignore unawaitedtask CreateTask must panic here (misuse under test): no task is created
			{"CreateTask(nil *Loop, fn)", func() { CreateTask(nilLoop, body) }},
			//asynciovet:ignore unawaitedtask CreateTask must panic here (misuse under test): no task is created
			{"CreateTask(nil, fn)", func() { CreateTask[int](nil, body) }},
			{"NewFuture(nil *T)", func() { NewFuture[int](nilT) }},
			{"CurrentTask(nil)", func() { CurrentTask(nil) }},
			{"GatherFuncs(t, fn, nil)", func() { GatherFuncs(t, body, nil) }},
			{"RunInExecutor(t, nil)", func() { RunInExecutor[int](t, nil) }},
			{"RunCoroutineThreadsafe(l, nil)", func() { RunCoroutineThreadsafe[int](l, nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Lock.Acquire(nil)", func() { NewLock().Acquire(nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Queue.Get(nil)", func() { NewQueue[int](1).Get(nil) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
			{"Condition.WaitFor(t, nil)", func() { NewCondition(nil).WaitFor(t, nil) }},
		} {
			v := mustPanic(tt, c.name, c.call)
			if ve, ok := v.(*ValueError); ok {
				r.log("%s: %s", c.name, ve.Msg)
			} else {
				r.log("%s: %T %v", c.name, v, v)
			}
		}
		if after := l.Stats(); after != before {
			r.log("state changed: %+v -> %+v", before, after)
		}
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		tt.Fatal(err)
	}
	checkEvents(tt, []string{
		"Sleep(nil, d): Sleep: nil *T (pass the running task's t, the argument of its function)",
		"fut.Await(nil): Future.Await: nil *T (pass the running task's t, the argument of its function)",
		"task.Await(nil): Task.Await: nil *T (pass the running task's t, the argument of its function)",
		"t.Await(nil): T.Await: nil awaitable",
		"t.Await(nil *Future): T.Await: nil awaitable",
		"t.Await(nil *Task): T.Await: nil awaitable",
		"Gather(t, fut, nil): Gather: nil awaitable",
		"GatherAny(t, nil *T): Gather: nil awaitable",
		"Gather(nil, fut): Gather: nil loop owner (pass a *Loop or the running task's *T)",
		"WaitFor(t, d, nil): WaitFor: nil awaitable",
		"WaitForFunc(t, d, nil): WaitForFunc: nil coroutine function",
		"Shield(nil): Shield: nil awaitable",
		"Shield(nil *Future): Shield: nil awaitable",
		"Wait(t, [fut, nil]): Wait: nil awaitable",
		"AsCompleted(t, [nil]): AsCompleted: nil awaitable",
		"Timeout(nil, d, body): Timeout: nil *T (pass the running task's t, the argument of its function)",
		"Timeout(t, d, nil): Timeout: nil body",
		"TaskGroup(nil, body): TaskGroup: nil *T (pass the running task's t, the argument of its function)",
		"TaskGroup(t, nil): TaskGroup: nil body",
		"Spawn(nil, fn): Spawn: nil *Group",
		"CreateTask(nil *Loop, fn): CreateTask: nil loop owner (pass a *Loop or the running task's *T)",
		"CreateTask(nil, fn): CreateTask: nil loop owner (pass a *Loop or the running task's *T)",
		"NewFuture(nil *T): NewFuture: nil loop owner (pass a *Loop or the running task's *T)",
		"CurrentTask(nil): CurrentTask: nil loop owner (pass a *Loop or the running task's *T)",
		"GatherFuncs(t, fn, nil): GatherFuncs: nil coroutine function",
		"RunInExecutor(t, nil): RunInExecutor: nil function",
		"RunCoroutineThreadsafe(l, nil): RunCoroutineThreadsafe: nil coroutine function",
		"Lock.Acquire(nil): Lock.Acquire: nil *T (pass the running task's t, the argument of its function)",
		"Queue.Get(nil): Queue.Get: nil *T (pass the running task's t, the argument of its function)",
		"Condition.WaitFor(t, nil): Condition.WaitFor: nil predicate",
	}, &r)
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
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
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
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
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
