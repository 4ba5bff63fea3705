package asyncio

// A task's life is a sequence of steps (asyncio's Task.__step): the loop
// pops a step from the ready queue and beginStep decides what the step
// throws in (a result, an error, a cancellation); the task's goroutine then
// runs until it awaits something pending (suspendOn), yields (yield), or
// returns from its function (main, finishStep). park ends a step and lets
// the same goroutine run the loop on (see runReady in loop.go).

import (
	"errors"
)

func (l *Loop) beginStep(t *T, from *futureCore) bool {
	if t.fut.done() {
		return false
	}
	var err error
	if from != nil {
		err = from.resultErr() // the wakeup reads the result (TASK-4)
	}
	if t.pendingThrow != nil {
		err, t.pendingThrow = t.pendingThrow, nil
	}
	if t.mustCancel {
		if !IsCancelled(err) {
			err = &CancelledError{Msg: t.cancelMsg}
		}
		t.mustCancel = false
	}
	t.futWaiter = nil
	if !t.started && err != nil {
		// An exception thrown into a coroutine that never started ends it
		// without running its body (CANCEL-3).
		t.started = true
		t.finishStep(err)
		return false
	}
	t.stepErr = err
	l.current = t
	if l.diagOn {
		l.diagBeginStep(t, err)
	}
	return true
}

func (t *T) main() {
	l := t.fut.loop
	l.noteHolder()
	if l.diagOn {
		t.diagStarted()
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		r := recover()
		if t.killed {
			// A deferred call that panics while Close unwinds the task
			// must not crash the process: report it (TASK-9).
			if _, ok := r.(killSignal); !ok && r != nil {
				l.CallExceptionHandler(ExceptionContext{
					Message: "Exception in task " + t.Name() + " while unwinding at Close",
					Err:     newPanicError(r),
					Task:    t,
				})
			}
			l.current = nil
			return
		}
		var err error = errGoexit
		if r != nil {
			err = newPanicError(r)
		}
		t.finishStep(err)
		l.endStep(t)
	}()
	err := t.body.run(t)
	returned = true
	// Finish first, so that a slow last step is reported with the task's
	// final state, as asyncio formats the task after its step (DEBUG-2).
	t.finishStep(err)
	l.endStep(t)
}

func (t *T) suspendOn(f *futureCore) error {
	t.checkRunning()
	if t.killed {
		return errKilled
	}
	switch {
	case f.loop != t.fut.loop:
		t.pendingThrow = runtimeErrorf("Task %s got Future %v attached to a different loop", t, f)
		t.fut.loop.scheduleStep(t)
	case f == t.fut:
		t.pendingThrow = runtimeErrorf("Task cannot await on itself: %s", t)
		t.fut.loop.scheduleStep(t)
	default:
		if f.waiter == nil && len(f.callbacks) == 0 {
			f.waiter = t
		} else {
			f.callbacks = append(f.callbacks, doneCallback{task: t})
		}
		t.futWaiter = f
		if t.mustCancel && f.cancel(t.cancelMsg) {
			t.mustCancel = false
		}
	}
	err := t.park()
	if err == nil && !f.done() {
		return runtimeErrorf("await wasn't used with future")
	}
	return err
}

func (t *T) yield() error {
	t.checkRunning()
	if t.killed {
		return errKilled
	}
	t.fut.loop.scheduleStep(t)
	return t.park()
}

func (t *T) park() error {
	l := t.fut.loop
	t.waitSince = l.coarseTime()
	if l.diagOn {
		t.diagSuspending()
	}
	l.endStep(t)
	if l.runReady(t) != upOwnStep {
		if !t.suspend() {
			l.current = t
			panic(killSignal{})
		}
		l.noteHolder()
	}
	err := t.stepErr
	t.stepErr = nil
	if l.diagOn {
		t.diagResumed(err)
	}
	return err
}

func (l *Loop) endStep(t *T) {
	l.current = nil
	if l.diagOn {
		l.diagEndStep(t)
	}
}

func (t *T) finishStep(err error) {
	f := t.fut
	switch {
	case err == nil && t.mustCancel:
		// Cancelled while running, returned without awaiting (CANCEL-2).
		t.mustCancel = false
		f.cancelPlain(t.cancelMsg)
	case err == nil:
		f.finish(nil)
	case IsCancelled(err):
		f.err, f.errOnce = err, true
		f.cancelPlain("")
	default:
		f.finish(err)
	}
	t.fut.loop.removeTask(t)
	if t.diag != nil {
		t.diagFinished(err)
	}
}

func (t *T) checkRunning() {
	if t.fut.loop.current != t {
		panic(runtimeErrorf("await with task %q, which is not the running task (awaiting outside a task, from a callback or from another goroutine?)", t.Name()))
	}
}

type killSignal struct{}

var errGoexit = errors.New("asyncio: task goroutine exited through runtime.Goexit")

// park ends the current step. The task first runs the loop itself, as

// long as what comes next is callbacks or its own next step (then it goes

// on with no switch at all); when another task's step comes up, it gives

// control back to the goroutine in RunForever and waits to be resumed.

// killSignal unwinds a task's goroutine when its loop is closed.

// beginStep does the loop's half of asyncio's Task.__step before the

// task runs (TASK-3/TASK-4). It returns false if there is nothing to run.

// endStep is called when t's step ends (it parks or finishes).

// errGoexit fails a task whose goroutine called runtime.Goexit (for

// example t.FailNow inside a task in a test). The Goexit then also ends

// the goroutine running the loop, as iter.Pull propagates it.

// main is the body of the task's goroutine. When it returns, control goes

// back to the goroutine that resumed the task.

// checkRunning panics unless t is the task whose step is running: an

// await from a plain goroutine, a callback, or with another task's handle

// is a programming error that would corrupt the loop.

// suspendOn makes t wait until f is done (TASK-3 step 5, "yielded a

// future"). It returns the error thrown into the step that resumes t: the

// awaited future's error, or a cancellation.

// yield is a bare yield (sleep(0)): one more step is queued behind

// everything already ready.

// finishStep records the outcome of the task's function (TASK-3 step 5).
