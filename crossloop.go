package asyncio

// Calls across loops (Seastar's submit_to): a task on loop A runs a
// function on loop B and awaits its outcome on A. Only the two loops'
// thread-safe entries are shared: the call goes to B through
// B.CallSoonThreadsafe and its outcome comes back through
// A.CallSoonThreadsafe, so neither loop ever touches the other's state and
// asyncio's ordering stays exact inside each loop.
//
// Lifetimes. While a call is in flight it is listed on both loops (the
// lists RunCoroutineThreadsafe's futures use, which Close completes):
//   - B closes first: the call's future on A fails with an error wrapping
//     ErrLoopClosed that names B's side;
//   - A closes first: the remote task on B is cancelled;
//   - the future on A is cancelled (the awaiting task was cancelled): the
//     remote task is cancelled with the same message, and the future is
//     cancelled at once, without waiting for B (as asyncio.wrap_future
//     does with run_coroutine_threadsafe's future).
// The call counts as outside work on A (a virtual-time loop waits for it)
// until its outcome is back or its future is cancelled.

import (
	"sync"
)

// crossCall is one call in flight from loop from to loop to.
type crossCall[V any] struct {
	from, to *Loop
	fut      *Future[V] // on from
	fn       func(*T) (V, error)
	ffn      func() (V, error) // CallFuncOn: a callback on to, no task

	// released: the call no longer counts as outside work on from
	// (from's goroutine only).
	released bool

	mu        sync.Mutex
	cancelled bool   // from gave up: the future was cancelled, or from closed
	cancelMsg string // the message to cancel the remote task with
	task      *Task[V]
	caller    callerSide[V]
	callee    calleeSide[V]
}

// callerSide and calleeSide list the call on from and on to: each loop's
// Close calls failClosed on what is still listed (threadsafeFuture).
type callerSide[V any] struct{ c *crossCall[V] }
type calleeSide[V any] struct{ c *crossCall[V] }

// failClosed runs when from closes with the call in flight: nobody awaits
// the outcome any more, so the remote task is cancelled.
func (s *callerSide[V]) failClosed() {
	s.c.giveUp("the calling loop was closed")
	s.c.to.forgetThreadsafeFuture(&s.c.callee)
}

// failClosed runs when to closes with the call in flight (its task killed,
// or its start never run): the future on from fails with ErrLoopClosed.
func (s *calleeSide[V]) failClosed() {
	c := s.c
	_, _ = c.from.CallSoonThreadsafe(func() {
		c.deliver(*new(V), &RuntimeError{Msg: "cross-loop call: the target loop was closed before the call finished", Err: ErrLoopClosed}, false, "")
	})
}

// giveUp records that from no longer waits and cancels the remote task
// (or keeps it from starting). Any goroutine.
func (c *crossCall[V]) giveUp(msg string) {
	c.mu.Lock()
	if c.cancelled {
		c.mu.Unlock()
		return
	}
	c.cancelled, c.cancelMsg = true, msg
	task := c.task
	c.mu.Unlock()
	if task != nil {
		_, _ = c.to.CallSoonThreadsafe(func() { task.Cancel(msg) })
	}
}

// SubmitTo runs fn as a task on the loop target and returns a future, on
// owner's loop, that receives the task's outcome (Seastar's submit_to,
// asyncio's run_coroutine_threadsafe wrapped for the calling loop). owner
// is the running task or its loop; the caller must be running that loop.
// Nothing on either loop is shared: the task is created on target through
// its CallSoonThreadsafe, and its outcome comes back the same way.
//
// The future's outcome is the remote task's: its value, its error
// (errors.Is and errors.As see the remote error as it is; a panic in fn is
// a *PanicError carrying the stack of target's task goroutine), or, for a
// remote task that ends cancelled, a cancellation with the remote message.
// Cancelling the future (directly, or by cancelling a task that awaits it)
// cancels the remote task with the same message, and the future is
// cancelled at once. If target closes before the task is done the future
// fails with an error wrapping ErrLoopClosed; if owner's loop closes first
// the remote task is cancelled. While the call is in flight it counts as
// outside work for owner's loop: on virtual time that loop waits for the
// call instead of moving its clock or reporting ErrDeadlock.
//
// A nil target or fn panics with a *ValueError. SubmitTo returns an error,
// and changes nothing, when target is owner's own loop (use CreateTask),
// when target or owner's loop is closed (the error wraps ErrLoopClosed),
// and when the caller is not the goroutine running owner's loop (the
// error is a *RuntimeError; a plain goroutine uses RunCoroutineThreadsafe).
func SubmitTo[V any](owner LoopOwner, target *Loop, fn func(*T) (V, error)) (*Future[V], error) {
	if fn == nil {
		panic(valueErrorf("SubmitTo: nil function"))
	}
	return submitTo[V](loopOf(owner, "SubmitTo"), target, fn, nil, "SubmitTo")
}

// CallOn runs fn as a task on target and suspends the running task t until
// its outcome is back: SubmitTo(t, target, fn) awaited by t. It returns
// SubmitTo's error, or the future's outcome. Cancelling t while it waits
// cancels the remote task with the same message, and CallOn returns the
// *CancelledError at once.
func CallOn[V any](t *T, target *Loop, fn func(*T) (V, error)) (V, error) {
	if t == nil {
		panicNilT("CallOn")
	}
	if fn == nil {
		panic(valueErrorf("CallOn: nil function"))
	}
	if err := checkAwaiting(t, "CallOn"); err != nil {
		var zero V
		return zero, err
	}
	fut, err := submitTo[V](t.fut.loop, target, fn, nil, "CallOn")
	if err != nil {
		var zero V
		return zero, err
	}
	return fut.Await(t)
}

// CallFuncOn runs fn as a callback on target (not a task: fn must not
// suspend) and suspends the running task t until its result is back. It
// is the cheap cross-loop call for short work on another loop's state: no
// task and no goroutine is created on target. A panic in fn is returned
// as a *PanicError with target's stack; otherwise it behaves as CallOn
// (errors, cancellation before fn ran, either loop closing). Once fn has
// run, cancelling t only drops the result.
func CallFuncOn[V any](t *T, target *Loop, fn func() (V, error)) (V, error) {
	if t == nil {
		panicNilT("CallFuncOn")
	}
	if fn == nil {
		panic(valueErrorf("CallFuncOn: nil function"))
	}
	if err := checkAwaiting(t, "CallFuncOn"); err != nil {
		var zero V
		return zero, err
	}
	fut, err := submitTo[V](t.fut.loop, target, nil, fn, "CallFuncOn")
	if err != nil {
		var zero V
		return zero, err
	}
	return fut.Await(t)
}

// checkAwaiting is the check of the awaiting forms: t is the task running
// on its loop, and the caller is that task.
func checkAwaiting(t *T, op string) error {
	l := t.fut.loop
	if !l.OnLoopGoroutine() || l.current != t {
		return runtimeErrorf("%s: %s is not the running task of its loop, or the caller is not its goroutine "+
			"(a plain goroutine uses RunCoroutineThreadsafe and waits on the ConcurrentFuture)", op, t.Name())
	}
	return nil
}

// checkCrossCall is every cross-loop entry's validation, before any state
// changes.
func checkCrossCall(from, target *Loop, op string) error {
	if target == nil {
		panic(valueErrorf("%s: nil target loop", op))
	}
	if target == from {
		return runtimeErrorf("%s: the target is the caller's own loop (use CreateTask, or call the function directly)", op)
	}
	if !from.OnLoopGoroutine() && (from.running.Load() || from.holder.Load() != 0) {
		return runtimeErrorf("%s called from a goroutine that is not running the calling loop "+
			"(a plain goroutine uses RunCoroutineThreadsafe)", op)
	}
	if from.closed {
		return &RuntimeError{Msg: op + ": the calling loop is closed", Err: ErrLoopClosed}
	}
	if target.closedThreadsafe() {
		return &RuntimeError{Msg: op + ": the target loop is closed", Err: ErrLoopClosed}
	}
	return nil
}

func submitTo[V any](from, target *Loop, fn func(*T) (V, error), ffn func() (V, error), op string) (*Future[V], error) {
	if err := checkCrossCall(from, target, op); err != nil {
		return nil, err
	}
	c := &crossCall[V]{from: from, to: target, fn: fn, ffn: ffn}
	c.caller.c, c.callee.c = c, c
	fut := &Future[V]{futureCore: futureCore{loop: from}}
	if from.debug {
		fut.unretrieved = newUnretrieved(1)
	}
	c.fut = fut
	if !target.trackThreadsafeFuture(&c.callee) {
		return nil, &RuntimeError{Msg: op + ": the target loop is closed", Err: ErrLoopClosed}
	}
	if !from.trackThreadsafeFuture(&c.caller) {
		target.forgetThreadsafeFuture(&c.callee)
		return nil, &RuntimeError{Msg: op + ": the calling loop is closed", Err: ErrLoopClosed}
	}
	if _, err := target.CallSoonThreadsafe(c.start); err != nil {
		target.forgetThreadsafeFuture(&c.callee)
		from.forgetThreadsafeFuture(&c.caller)
		return nil, &RuntimeError{Msg: op + ": the target loop is closed", Err: ErrLoopClosed}
	}
	from.addExternal(1)
	fut.cancelFn = func(msg string) bool {
		if fut.state != statePending {
			return false
		}
		c.release()
		from.forgetThreadsafeFuture(&c.caller)
		c.giveUp(msg)
		return fut.cancelPlain(msg)
	}
	return fut, nil
}

// closedThreadsafe reports whether Close has closed l; unlike IsClosed,
// any goroutine may call it.
func (l *Loop) closedThreadsafe() bool {
	l.threadsafeMu.Lock()
	defer l.threadsafeMu.Unlock()
	return l.closed
}

// release stops counting the call as outside work on from (from only).
func (c *crossCall[V]) release() {
	if !c.released {
		c.released = true
		c.from.addExternal(-1)
	}
}

// start runs on to: it creates the remote task (or runs the function).
func (c *crossCall[V]) start() {
	c.mu.Lock()
	if c.cancelled {
		c.mu.Unlock()
		c.to.forgetThreadsafeFuture(&c.callee)
		return
	}
	if c.ffn != nil {
		c.mu.Unlock()
		v, err := callFuncRecovered(c.ffn)
		c.finish(v, err, false, "")
		return
	}
	task := CreateTask(c.to, c.fn)
	c.task = task
	c.mu.Unlock()
	if task.Done() { // an eager task that finished at once
		c.taskDone()
		return
	}
	task.AddDoneCallback(c.taskDone)
}

// taskDone runs on to when the remote task is done.
func (c *crossCall[V]) taskDone() {
	tk := c.task
	v, err := tk.Result() // also marks the error retrieved on to
	if tk.Cancelled() {
		msg := ""
		if ce, ok := err.(*CancelledError); ok {
			msg = ce.Msg
		}
		c.finish(v, nil, true, msg)
		return
	}
	c.finish(v, err, false, "")
}

// finish sends the outcome from to back to from.
func (c *crossCall[V]) finish(v V, err error, cancelled bool, msg string) {
	c.to.forgetThreadsafeFuture(&c.callee)
	// A closed from refuses the delivery; its Close cancelled the call.
	_, _ = c.from.CallSoonThreadsafe(func() { c.deliver(v, err, cancelled, msg) })
}

// deliver runs on from: the outcome completes the future unless it was
// cancelled meanwhile.
func (c *crossCall[V]) deliver(v V, err error, cancelled bool, msg string) {
	f := c.fut
	if f.state != statePending {
		return
	}
	c.release()
	c.from.forgetThreadsafeFuture(&c.caller)
	switch {
	case cancelled:
		f.cancelPlain(msg)
	case err != nil:
		f.finish(err)
	default:
		f.value = v
		f.finish(nil)
	}
}

// callFuncRecovered calls fn, turning a panic into a *PanicError with the
// panicking goroutine's stack.
func callFuncRecovered[V any](fn func() (V, error)) (v V, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	return fn()
}
