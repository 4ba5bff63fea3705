package asyncio

// Cancellation, all of its paths (asyncio's Task.cancel/uncancel and
// Future.cancel). A request (T.cancel) is counted, then either cancels the
// future the task is suspended on, which wakes the task with that future's
// CancelledError, or, when the task is running or about to run, sets
// mustCancel: the delivery then happens where the task next yields control
// (beginStep throws a CancelledError into the step; suspendOn cancels the
// future it is about to wait on; finishStep ends a task that returns
// without awaiting as cancelled, CANCEL-2). A task cancelled before its
// first step never runs its function (beginStep, CANCEL-3). Uncancel
// withdraws requests (3.13: the last one withdraws a pending delivery).
// The message a CancelledError carries is handed out once, then a fresh
// error without it (makeCancelledError, FUT-8). Structured code cancels
// through these paths only: TaskGroup (taskgroup.go), Timeout and WaitFor
// (timeout.go, cancelAndWait here), Gather (gather.go), and the Runner's
// shutdown (cancelAllTasks here).

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
			t.mustCancel = false
		}
	}
	return int(t.numCancelRequested)
}

func (t *T) cancel(msg string) bool {
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
	t.mustCancel = true
	t.cancelMsg = msg
	t.startDeferred() // a deferred task ends cancelled at its first step
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
	if f.cancelFn != nil {
		return f.cancelFn(msg)
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
