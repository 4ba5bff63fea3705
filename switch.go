//go:build !asyncio_chanswitch

package asyncio

import (
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"time"
)

// taskSwitch moves control between the goroutine running the loop (the
// one in RunForever) and a task's goroutine. This implementation uses
// iter.Pull's coroutines: resuming a task and its giving control back are
// direct goroutine switches that bypass the scheduler (about 4x cheaper
// than a channel handoff on our machines). Build with -tags
// asyncio_chanswitch for the channel implementation, to measure one
// against the other (switch_chan.go).
type taskSwitch struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
}

// resume runs t until its step ends (it suspends or finishes). It is
// called only by the goroutine in RunForever; t's first resume starts t's
// function on a new coroutine.
func (t *T) resume() {
	if t.sw.next == nil {
		t.sw.next, t.sw.stop = iter.Pull(func(yield func(struct{}) bool) {
			t.sw.yield = yield
			t.main()
		})
	}
	t.sw.next()
}

// suspend gives control back to the goroutine that resumed t and waits to
// be resumed. It returns false when t is being killed (Close).
func (t *T) suspend() bool {
	return t.sw.yield(struct{}{}) && !t.killed
}

// kill unwinds the goroutine of a task still pending when its loop is
// closed: its deferred calls run, then the goroutine exits.
func (t *T) kill() {
	t.killed = true
	t.sw.stop()
}

// created reports whether the task's goroutine was ever started.
func (s *taskSwitch) created() bool { return s.next != nil }

// park ends the current step. The task first runs the loop itself, as
// long as what comes next is callbacks or its own next step (then it goes
// on with no switch at all); when another task's step comes up, it gives
// control back to the goroutine in RunForever and waits to be resumed.
func (t *T) park() error {
	l := t.fut.loop
	l.endStep(t)
	if !l.drive(t) {
		if !t.suspend() {
			l.current = t
			panic(killSignal{})
		}
		if l.debug {
			l.holderGoroutine = goroutineID()
		}
	}
	err := t.stepErr
	t.stepErr = nil
	return err
}

// killSignal unwinds a task's goroutine when its loop is closed.
type killSignal struct{}

// prepareStep does the loop's half of asyncio's Task.__step before the
// task runs (TASK-3/TASK-4). It returns false if there is nothing to run.
func (l *Loop) prepareStep(t *T, from *futureCore) bool {
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
	if l.debug {
		l.stepStart = time.Now()
	}
	return true
}

// endStep is called when t's step ends (it parks or finishes).
func (l *Loop) endStep(t *T) {
	l.current = nil
	if l.debug && !l.stepStart.IsZero() {
		if dt := time.Since(l.stepStart); dt >= l.slowCallback {
			buf := make([]byte, 8192)
			buf = buf[:runtime.Stack(buf, false)]
			slog.Warn(fmt.Sprintf("Executing %s took %.3f seconds", t, dt.Seconds()), slog.String("stack", string(buf)))
		}
		l.stepStart = time.Time{}
	}
}

// errGoexit fails a task whose goroutine called runtime.Goexit (for
// example t.FailNow inside a task in a test). The Goexit then also ends
// the goroutine running the loop, as iter.Pull propagates it.
var errGoexit = errors.New("asyncio: task goroutine exited through runtime.Goexit")

// main is the body of the task's goroutine. When it returns, control goes
// back to the goroutine that resumed the task.
func (t *T) main() {
	l := t.fut.loop
	if l.debug {
		l.holderGoroutine = goroutineID()
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
