package asyncio

// A task's life is a sequence of steps (asyncio's Task.__step): the loop
// pops a step from the ready queue and beginStep decides what the step
// throws in (a result, an error, a cancellation); the task's goroutine then
// runs until it awaits something pending (suspendOn), yields (yield), or
// returns from its function (main, finishStep). park ends a step and lets
// the same goroutine run the loop on (see runReady in loop.go).

import (
	"errors"
	"runtime"
	"runtime/trace"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// beginStep does the loop's half of asyncio's Task.__step before the
// task runs (TASK-3/TASK-4). It returns false if there is nothing to run.
func (l *Loop) beginStep(t *T, from *futureCore) bool {
	if t.fut.done() {
		return false
	}
	var err error
	if from != nil {
		err = from.resultErr() // the wakeup reads the result (TASK-4)
	}
	if t.stepErr != nil {
		// A RuntimeError for this step, set by suspendOn during the last
		// one (stepErr is nil while the task runs: park takes it).
		err, t.stepErr = t.stepErr, nil
	}
	if t.mustCancel != cancelNone {
		if outcomeOutlivesCancel(from) {
			// The outcome came first: the cancellation waits for the
			// next await, and does not discard a result returned before.
			t.mustCancel = cancelLate
		} else {
			if !IsCancelled(err) {
				err = &CancelledError{Msg: t.cancelMessage()}
			}
			t.mustCancel = cancelNone
		}
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
	l.progress()
	if l.obs != nil {
		l.obs.stepBegan(t, err)
	}
	return true
}

// main is the body of the task's goroutine. When it returns, control goes
// back to the goroutine that resumed the task.
func (t *T) main() {
	l := t.fut.loop
	token := gid.Token()
	l.takeLoop(token)
	if l.obs != nil {
		l.obs.taskStarted(t)
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		r := recover()
		if _, ok := r.(lockedUnwind); ok && t.killed {
			r = nil
		}
		eagerGoexit := l.eagerGoexit // (consumed: one per goroutine ended)
		l.eagerGoexit = false
		if r == nil && (l.isResumer(t) || eagerGoexit) {
			// The task t resumed (runReady, or eagerStart from t's code or
			// from a callback on t's goroutine) ended its goroutine with
			// runtime.Goexit, which iter.Pull passes on to t's goroutine:
			// t did nothing wrong, but its goroutine is gone, as the
			// driver's soon is. t stays pending (Close reports it;
			// RunForever empties the chain).
			return
		}
		if t.killed {
			// Close unwinds the task with runtime.Goexit (see park), which
			// recover cannot stop; r is set only when a deferred call
			// panicked meanwhile. That must not crash the process: report
			// it (TASK-9), and the Goexit goes on.
			if r != nil {
				l.CallExceptionHandler(ExceptionContext{
					Message: "Exception in task " + quoteText(t.Name()) + " while unwinding at Close",
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
	err := runTaskFunc(token, t)
	returned = true
	if t.killed {
		// Unwound at Close, and the task's code recovered the unwinding
		// panic of a locked goroutine (switch.go): its outcome is no
		// longer anyone's.
		l.current = nil
		return
	}
	// Finish first, so that a slow last step is reported with the task's
	// final state, as asyncio formats the task after its step (DEBUG-2).
	t.finishStep(err)
	l.endStep(t)
}

// suspendOn makes t wait until f is done (TASK-3 step 5, "yielded a
// future"). It returns the error thrown into the step that resumes t: the
// awaited future's error, or a cancellation.
func (t *T) suspendOn(f *futureCore) error {
	if t.killed {
		return t.awaitKilled()
	}
	switch {
	case f.loop != t.fut.loop:
		if f.loop == nil { // before any change
			panicNilLoop("Await")
		}
		t.stepErr = runtimeErrorf("Task %s got Future %s attached to a different loop", t, f.repr())
		t.fut.loop.scheduleStep(t)
	case f == t.fut:
		t.stepErr = runtimeErrorf("Task cannot await on itself: %s", t)
		t.fut.loop.scheduleStep(t)
	default:
		if f.waiter == nil && len(f.registered()) == 0 {
			f.waiter = t
		} else {
			f.register(doneCallback{task: t})
		}
		t.futWaiter = f
		if t.mustCancel != cancelNone && f.cancel(t.cancelMessage()) {
			t.mustCancel = cancelNone
		}
	}
	err := t.park()
	if err == nil && !f.done() {
		return runtimeErrorf("await wasn't used with future")
	}
	return err
}

// yield is a bare yield (sleep(0)): one more step is queued behind
// everything already ready.
func (t *T) yield() error {
	if t.killed {
		return t.awaitKilled()
	}
	l := t.fut.loop
	if l.yieldsAlone(t) {
		l.iterateAlone()
		return nil
	}
	l.scheduleStep(t)
	return t.park()
}

// yieldsAlone reports whether the iteration that t's yield would start
// holds t's next step and nothing else, and does nothing else either: the
// current snapshot is done, nothing is queued, there are no timers, no
// watched descriptors (no poll to make), no thread-safe calls, no hooks
// and no observers, and t's next step throws nothing in. Then that
// iteration is iterateAlone: the same counters, without the round trip
// through the ready queue (a task that only yields, W2). Each condition
// is a field the loop keeps anyway.
func (l *Loop) yieldsAlone(t *T) bool {
	return l.snapshotLeft == 0 && l.ready.len() == 0 && len(l.timers) == 0 && len(l.fds) == 0 &&
		l.obs == nil && l.beforePoll == nil && l.afterPoll == nil && len(l.prePolls) == 0 && !l.stopping && !l.deadlocked &&
		!l.threadsafeFlag.Load() && t.mustCancel == cancelNone && t.stepErr == nil && t.eager != eagerStepping &&
		trace.IsEnabled() == l.diagSet.tracing
}

// iterateAlone is one iteration of the loop whose snapshot is the step
// of the task running now (see yieldsAlone): startIteration and
// beginStep reduced to what they do then.
func (l *Loop) iterateAlone() {
	l.metrics.iterations++
	if l.metrics.iterations&coarseClockEvery == 0 {
		l.coarseNow = l.Time()
	}
	l.metrics.entries++
	l.metrics.steps++
	l.progress()
}

// park ends the current step. The task first runs the loop itself, as
// long as what comes next is callbacks or its own next step (then it goes
// on with no switch at all); when another task's step comes up, it gives
// control back to the goroutine in RunForever and waits to be resumed.
func (t *T) park() error {
	l := t.fut.loop
	t.waitSince = l.coarseTime()
	if l.obs != nil {
		l.obs.suspending(t)
	}
	l.endStep(t)
	// An eager first step ends here: straight back to the creator, which
	// resumed t inside CreateTask (eagerStart).
	if t.eager == eagerStepping || l.runReady(t) != upOwnStep {
		if !t.suspend() {
			l.current = t
			l.takeLoop(gid.Token())
			if t.outcomeAtKill() {
				// The outside operation t awaited happened: the await
				// returns its outcome, and t's next await unwinds.
				l.unwindNext = t
				return nil
			}
			t.unwind()
		}
		l.takeLoop(gid.Token())
	}
	err := t.stepErr
	t.stepErr = nil
	if l.obs != nil {
		l.obs.resumed(t, err)
	}
	return err
}

// unwind ends t's goroutine for Close. runtime.Goexit, not a panic: a
// recover() in the task's code (a TaskGroup or Timeout body, or the user's
// own) cannot catch it and carry on awaiting, and it runs every deferred
// call on its way out. Those calls may still use the loop, as the running
// task (the caller made t the current task and the loop's holder).
func (t *T) unwind() {
	if t.locked() {
		// A Goexit would end the goroutine calling Close too (see
		// "Locked threads" in switch.go); main recovers this.
		panic(lockedUnwind{})
	}
	runtime.Goexit()
}

// awaitKilled is an await of a task that Close is unwinding: in its
// deferred calls it returns a CancelledError at once (TASK-9); after an
// await that returned an outside outcome instead of unwinding
// (outcomeAtKill), it unwinds t now.
func (t *T) awaitKilled() error {
	if l := t.fut.loop; l.unwindNext == t {
		l.unwindNext = nil
		t.unwind()
	}
	return errKilled
}

// outcomeAtKill is asked by park when Close unwinds t: it reports whether
// the future t awaits holds (now) the outcome of an outside operation that
// already happened, which the await then returns (futureExtras).
func (t *T) outcomeAtKill() bool {
	f := t.futWaiter
	var kept bool
	switch {
	case f == nil || !f.outside:
	case f.state != statePending:
		// Delivered, t's wakeup still queued when the loop stopped.
		kept = f.state == stateFinished
	case f.extras != nil && f.extras.ops != nil:
		kept = f.extras.ops.outcomeAtKill()
	}
	if kept {
		t.futWaiter = nil
	}
	return kept
}

// eagerStart runs t's first step now, inside CreateTask (asyncio's
// Task.__eager_start): t becomes the current task, its goroutine is resumed
// from the creator's goroutine (a task's, or whichever runs the loop when a
// callback creates it), and the step ends where t first parks (park sees
// eagerStepping and gives control straight back, without running the loop) or
// returns. The creator then is the current task again. Resumes nest this
// way, one eager step inside another, as they do in runReady (iter.Pull
// allows it: next switches to the task's goroutine and its yield switches
// back to whichever goroutine called next).
func (l *Loop) eagerStart(t *T) {
	prev, prevHolder := l.current, l.holder.Load()
	t.started, t.eager = true, eagerStepping
	l.current = t
	if l.obs != nil {
		l.obs.stepBegan(t, nil)
	}
	exited := true
	defer func() {
		if exited {
			// t's goroutine ended with runtime.Goexit, and iter.Pull
			// ends this one too: its task, if any, is not to blame.
			l.eagerGoexit = true
		}
	}()
	t.resume()
	exited = false
	t.eager = 0
	l.current = prev
	l.takeLoop(prevHolder) // the creator runs the loop again
}

// endStep is called when t's step ends (it parks or finishes).
func (l *Loop) endStep(t *T) {
	l.current = nil
	if l.obs != nil {
		l.obs.stepEnded(t)
	}
}

// finishStep records the outcome of the task's function (TASK-3 step 5).
func (t *T) finishStep(err error) {
	f := t.fut
	switch {
	case err == nil && t.mustCancel == cancelPending:
		// Cancelled while running, returned without awaiting (CANCEL-2).
		t.mustCancel = cancelNone
		f.cancelPlain(t.cancelMessage())
	case err == nil:
		// A late cancellation (cancelLate) stays counted, undelivered:
		// the result holds an outcome it came too late to stop.
		t.mustCancel = cancelNone
		f.finish(nil)
	case IsCancelled(err):
		f.err, f.errOnce = err, true
		f.cancelPlain("")
	default:
		f.finish(err)
	}
	if t.ctx != nil {
		t.endContext() // context.go: the task's Context is done
	}
	l := t.fut.loop
	l.removeTask(t)
	if l.obs != nil {
		l.obs.taskFinished(t, err)
	}
}

// checkRunning panics unless t is the task whose step is running: an
// await from a plain goroutine, a callback, or with another task's handle
// is a programming error that would corrupt the loop.
func (t *T) checkRunning(op string) {
	if t == nil {
		panicNilT(op)
	}
	l := t.fut.loop
	if !l.onLoop() {
		l.checkThread(op)
	}
	if l.current != t {
		panicNotRunning(op, t)
	}
}

// checkCaller is the part of checkRunning that every API taking a t does
// first, before any state changes: t is not nil and the caller runs t's
// loop. (Whether t is the running task, APIs such as Timeout and TaskGroup
// report with asyncio's own error.)
func (t *T) checkCaller(op string) {
	if t == nil {
		panicNilT(op)
	}
	t.fut.loop.checkThread(op)
}

// panicNilT and panicNotRunning are checkRunning's slow paths, out of
// line so that the check inlines.
//
//go:noinline
func panicNilT(op string) {
	panic(valueErrorf("%s: nil *T (pass the running task's t, the argument of its function)", op))
}

//go:noinline
func panicNotRunning(op string, t *T) {
	panic(runtimeErrorf("%s with task %q, which is not the running task (awaiting outside a task, or from a callback?)", op, t.Name()))
}

// runTaskFunc runs the task's function. It is a frame of its own, kept
// out of line, so that the watchdog can find the goroutine holding the
// loop in a dump of every goroutine's stack: the traceback prints this
// frame's first argument, the goroutine's token (see blockedStack).
//
//go:noinline
func runTaskFunc(token uint64, t *T) error {
	err := t.body.run(t)
	if token == 0 { // keeps token live, hence printed, during the call
		panic("asyncio: zero goroutine token")
	}
	return err
}

// errGoexit fails a task whose goroutine called runtime.Goexit (for
// example t.FailNow inside a task in a test). The Goexit then also ends
// the goroutine running the loop, as iter.Pull propagates it.
var errGoexit = errors.New("asyncio: task goroutine exited through runtime.Goexit")
