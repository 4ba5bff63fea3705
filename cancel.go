package asyncio

// Cancellation, all of its paths (asyncio's Task.cancel/uncancel and
// Future.cancel). A request (T.cancel) is counted, then either cancels the
// future the task is suspended on, which wakes the task with that future's
// CancelledError, or, when the task is running or about to run, sets
// mustCancel: the delivery then happens where the task next yields control
// (beginStep throws a CancelledError into the step; suspendOn cancels the
// future it is about to wait on; finishStep ends a task that returns
// without awaiting as cancelled, CANCEL-2). A task cancelled before its
// first step never runs its function (beginStep, CANCEL-3; an eager task
// too, endCancelledUnstarted). Uncancel withdraws requests (3.13: the last
// one withdraws a pending delivery). The message a CancelledError carries
// is handed out once, then a fresh error without it (makeCancelledError,
// FUT-8).
//
// Who requests a cancellation:
//   - T.Cancel and Task.Cancel (here), Future.Cancel (futureCore.cancel
//     here: cancelPlain, or the future's own ops.cancel).
//   - ops.cancel overrides: gather's outer future cancels its children
//     (gather.go); a channel operation's future asks its helper goroutine
//     to stop and stays pending until it answers (awaitChanOp, chan.go); a
//     Go call's or executor job's future cancels the call's context and
//     releases the virtual clock (startOutside, bridge.go).
//   - Structured code: TaskGroup (taskgroup.go), Timeout and WaitFor
//     (timeout.go, and cancelAndWait here), Gather (gather.go), the
//     Runner's shutdown (cancelAllTasks here) and its join timeout for the
//     default executor (executor.go).
//   - From outside the loop, through CallSoonThreadsafe: a task's bound
//     context (WithContext, RunContext) being done (cancelByContext,
//     context.go); Ctrl-C cancelling the main task (interrupts.interrupt,
//     runner_signal.go, withdrawn again by interrupts.finish); a
//     ConcurrentFuture cancelled by its goroutine cancels its source,
//     or cancels it as soon as the chain exists (threadsafe.go).
//   - Shield (shield.go): cancelling the outer future leaves the inner
//     awaitable running; the inner one cancelled cancels the outer.
//   - RunInExecutor's future cancelled cancels the job's context
//     (runInExecutor's done callback, executor.go).
//   - A CrossQueue waiter's future (crossqueue.go): still waiting, it
//     leaves the queue and is cancelled; already woken (its wakeup is on
//     the way from another loop), the request is held and wins when the
//     wakeup arrives (heldCancel.instead), the promised item or slot
//     passing to the next waiter.
//
//   - Re-armed for the task's next await (rearmCancel) where a statement
//     cannot return the cancellation it saw: AsCompletedBounded's loop
//     after a break (bounded.go).
//   - Delivered without an await (takePendingCancel) by a statement that
//     returns the *CancelledError itself: Retry stopping on an attempt
//     that failed after its task was asked to cancel (retry.go).
//
// When the cancellation comes too late for an operation outside the loop
// (issue 19): its outcome wins, and the cancellation is re-armed for the
// task's next await (rearmCancel, heldCancel, outcomeOutlivesCancel here;
// used by awaitChanOp and Go), as a late one (cancelLate): a function that
// returns before that await ends with its result, not cancelled.

// Cancel requests the task's cancellation (asyncio's Task.cancel); see
// T.Cancel.
func (tk *Task[V]) Cancel(msg ...string) bool { return tk.t.cancel(joinMsg(msg)) }

// Cancelling returns the number of pending cancellation requests
// (asyncio's cancelling()).
func (tk *Task[V]) Cancelling() int { return int(tk.t.numCancelRequested) }

// Uncancel withdraws one cancellation request (asyncio's uncancel()); see
// T.Uncancel.
func (tk *Task[V]) Uncancel() int { return tk.t.Uncancel() }

// Cancel requests the task's cancellation (asyncio's Task.cancel,
// CANCEL-1): it returns false if the task is done; otherwise it counts the
// request, cancels the future the task awaits (if any), or arranges for a
// *CancelledError carrying msg to be returned by the task's next await.
// It never runs task code.
func (t *T) Cancel(msg ...string) bool { return t.cancel(joinMsg(msg)) }

// Cancelling returns the number of cancellation requests not withdrawn by
// Uncancel (asyncio's cancelling()). It is not reset when the task ends.
func (t *T) Cancelling() int { return int(t.numCancelRequested) }

// Uncancel withdraws one cancellation request and returns the remaining
// count (asyncio's uncancel(), 3.13 semantics: when the count reaches 0 a
// cancellation not yet delivered is withdrawn too).
func (t *T) Uncancel() int {
	t.fut.loop.checkThread("Task.Uncancel")
	if t.numCancelRequested > 0 {
		t.numCancelRequested--
		if t.numCancelRequested == 0 {
			t.mustCancel = cancelNone
		}
	}
	return int(t.numCancelRequested)
}

func (t *T) cancel(msg string) bool {
	if t.fut == nil { // the zero Task
		panicNilLoop("Task.Cancel")
	}
	t.fut.loop.checkThread("Task.Cancel") // before any change (DEBUG-3)
	t.fut.markRetrieved()
	if t.fut.done() {
		return false
	}
	t.numCancelRequested++
	t.noteCancelRequest(msg) // who cancelled whom (introspect.go)
	// inCancel: back at t through a cycle of tasks awaiting each other
	// (FuzzTaskGraph). CPython recurses until RecursionError; the request
	// stops here and t keeps it as mustCancel, as for a gather holding
	// its own awaiter (GATHER-6).
	if t.futWaiter != nil && !t.inCancel {
		t.inCancel = true
		ok := t.futWaiter.cancel(msg)
		t.inCancel = false
		if ok {
			return true
		}
	}
	t.mustCancel = cancelPending
	t.setCancelMsg(msg)
	t.startDeferred() // a deferred task ends cancelled at its first step
	return true
}

// pendingCancel is a task's cancellation not delivered yet (T.mustCancel).
type pendingCancel uint8

const (
	cancelNone pendingCancel = iota
	// cancelPending: delivered where the task next yields control; a
	// function that returns first ends the task cancelled (CANCEL-2).
	cancelPending
	// cancelLate: requested while the task waited for an operation
	// outside the loop that had completed (outcomeOutlivesCancel,
	// heldCancel.rearm), whose outcome the await returned instead. It is
	// delivered at the task's next await like cancelPending; but a
	// function that returns before one ends with its result, which holds
	// that outcome (a value taken from a channel, a value sent, a Go
	// call's result): ending the task cancelled would discard an effect
	// that already happened, which the cancellation came too late to stop.
	cancelLate
)

// rearmCancel leaves a cancellation of t, with msg, pending for its next
// await, as state: cancelPending as for a task cancelled while it runs
// (CANCEL-2), or cancelLate when the operation t awaited completed
// outside the loop before the cancellation could stop it and its outcome
// was returned instead.
func (t *T) rearmCancel(msg string, state pendingCancel) {
	t.mustCancel = state
	t.setCancelMsg(msg)
}

// takePendingCancel delivers a cancellation not delivered yet (mustCancel)
// by a statement that returns its own *CancelledError instead of
// awaiting: it clears the pending delivery, so that t's next await does
// not deliver the same request again, and returns its message (ok false:
// none was pending). Retry (retry.go) stops this way on an attempt that
// failed after its task was asked to cancel.
func (t *T) takePendingCancel() (msg string, ok bool) {
	if t.mustCancel == cancelNone {
		return "", false
	}
	t.mustCancel = cancelNone
	return t.cancelMessage(), true
}

// heldCancel is a cancellation that an operation outside the loop held
// back because its outcome was already on the way (a channel helper asked
// to stop, a Go call whose function had returned): the operation's future
// stays pending until the outcome arrives.
type heldCancel struct {
	held bool
	msg  string
}

// hold records the first held request's message.
func (h *heldCancel) hold(msg string) {
	if !h.held {
		h.held, h.msg = true, msg
	}
}

// rearm is called by the awaiting task t once the operation's await
// returned err: if a cancellation was held and the operation's outcome won
// (err is not the cancellation), the cancellation is re-armed for t's next
// await, unless it was withdrawn meanwhile (Uncancel), as a late one
// (cancelLate: a function returning that outcome at once keeps it).
func (h *heldCancel) rearm(t *T, err error) {
	if h.held && !IsCancelled(err) && t.numCancelRequested > 0 {
		t.rearmCancel(h.msg, cancelLate)
	}
}

// instead is called by the awaiting task t once the operation's wakeup
// arrived, for an operation whose effect has not happened yet (a
// CrossQueue waiter that was only promised its item or slot): a held
// cancellation not withdrawn meanwhile wins, as in asyncio's await of a
// future completed before a cancel (CANCEL-4), and instead returns the
// *CancelledError to return in place of the operation; nil otherwise.
func (h *heldCancel) instead(t *T) error {
	if h.held && t.numCancelRequested > 0 {
		return &CancelledError{Msg: h.msg}
	}
	return nil
}

// outcomeOutlivesCancel reports whether a task woken by from (nil: not a
// wakeup) keeps a pending cancellation for its next await instead of
// having it replace from's outcome. asyncio's Task.__step replaces it
// (CANCEL-4: a future completed, then its awaiting task cancelled before
// it resumed: the await raises CancelledError), and so does this package
// for every future of the loop's own; but an outside future's outcome is
// an effect that already happened (a value taken from a channel, a value
// sent, a Go call or executor job that returned), and replacing it would
// lose it (issue 19 item 1).
func outcomeOutlivesCancel(from *futureCore) bool {
	return from != nil && from.outside && from.state == stateFinished
}

// endCancelledUnstarted ends t, whose first step has not run, if a
// cancellation is pending (a done WithContext ctx): its function never runs
// (CANCEL-3). beginStep does this for a scheduled first step; CreateTask
// calls it instead of an eager first step, which would run the function
// at once, so the eager task is done, cancelled, when CreateTask returns.
func (t *T) endCancelledUnstarted() bool {
	if t.mustCancel == cancelNone {
		return false
	}
	t.mustCancel = cancelNone
	t.started = true
	t.finishStep(&CancelledError{Msg: t.cancelMessage()})
	return true
}

var errKilled = &CancelledError{Msg: "event loop closed while the task was pending"}

// cancelAndWait is asyncio.tasks._cancel_and_wait: cancel aw and wait until
// it is done, without being woken by its outcome (only a cancellation of t
// itself is returned).
func cancelAndWait(t *T, aw Awaitable) error {
	waiter := NewFuture[struct{}](t.Loop())
	waiter.kind = kindCancelWait
	id := aw.core().addDoneCallbackFrom(func() {
		if !waiter.Done() {
			waiter.SetResult(struct{}{})
		}
	}, &waiter.futureCore)
	defer aw.RemoveDoneCallback(id)
	aw.Cancel()
	_, err := waiter.Await(t)
	return err
}

// makeCancelledError builds the error a cancelled future returns (FUT-8).
func (f *futureCore) makeCancelledError() error {
	if f.errOnce {
		err := f.err
		f.err, f.errOnce = nil, false
		return err
	}
	if ce, ok := f.err.(*CancelledError); ok {
		return &CancelledError{Msg: ce.Msg}
	}
	return &CancelledError{}
}

// cancelMessage is the message a CANCELLED future was cancelled with
// ("" for any other state, and for a task whose function returned the
// cancellation): asyncio's fut._cancel_message. It consumes nothing.
func (f *futureCore) cancelMessage() string {
	if f.state == stateCancelled && !f.errOnce {
		if ce, ok := f.err.(*CancelledError); ok {
			return ce.Msg
		}
	}
	return ""
}

// cancel is Future.cancel, or Task.cancel for a task's future.
func (f *futureCore) cancel(msg string) bool {
	if f.task != nil {
		return f.task.cancel(msg)
	}
	if f.extras != nil && f.extras.ops != nil {
		return f.extras.ops.cancel(f, msg)
	}
	return f.cancelPlain(msg)
}

// cancelPlain is asyncio's Future.cancel (FUT-4).
func (f *futureCore) cancelPlain(msg string) bool {
	f.markRetrieved()
	if f.state != statePending {
		return false
	}
	f.state = stateCancelled
	if msg != "" {
		f.err = &CancelledError{Msg: msg}
	}
	f.scheduleCallbacks()
	return true
}

func joinMsg(msg []string) string {
	switch len(msg) {
	case 0:
		return ""
	case 1:
		return msg[0]
	}
	s := msg[0]
	for _, m := range msg[1:] {
		s += " " + m
	}
	return s
}

func cancelAllTasks(l *Loop) {
	pending := AllTasks(l)
	if len(pending) == 0 {
		return
	}
	// A cross-loop call's remote task cancelled here ends because its loop
	// is closing: its caller is told so (crossCall.taskDone).
	l.grp.shuttingDown = true
	defer func() { l.grp.shuttingDown = false }()
	for _, t := range pending {
		t.Cancel()
	}
	// Run until every cancelled task is done: a done callback counts them
	// down and stops the loop at zero.
	left := len(pending)
	for _, t := range pending {
		t.fut.addDoneCallback(func() {
			left--
			if left == 0 {
				l.Stop()
			}
		})
	}
	for left > 0 {
		if err := l.RunForever(); err != nil {
			break // deadlock on virtual time: nothing more can finish
		}
	}
	for _, t := range pending {
		if t.Done() && !t.Cancelled() {
			if err := t.fut.Err(); err != nil {
				l.CallExceptionHandler(ExceptionContext{
					Message: "unhandled exception during asyncio.run() shutdown",
					Err:     err,
					Task:    t,
				})
			}
		}
	}
}
