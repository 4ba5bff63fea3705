package asyncio

// Calls across loops (Seastar's submit_to): a task on loop A runs a
// function on loop B and awaits its outcome on A. Only the two loops'
// thread-safe entries are shared: the call goes to B through
// B.CallSoonThreadsafe and its outcome comes back through
// A.CallSoonThreadsafe, so neither loop ever touches the other's state and
// asyncio's ordering stays exact inside each loop.
//
// Lifetimes. A call in flight is listed on its calling loop A (an
// intrusive list that only A's goroutine touches), and A is registered
// once with every loop it has called, as one entry of that loop's list of
// foreign waiters (the list RunCoroutineThreadsafe's futures use, which
// Close completes). So a call costs no lock and no map beyond the two
// CallSoonThreadsafe it makes, and:
//   - B closes first: B's Close tells A (through A's CallSoonThreadsafe),
//     and every call of A's still in flight to B fails with an error
//     wrapping ErrLoopClosed that names B's side;
//   - A closes first: the remote task of every call still in flight is
//     cancelled;
//   - the future on A is cancelled (the awaiting task was cancelled): the
//     remote task is cancelled with the same message, and the future is
//     cancelled at once, without waiting for B (as asyncio.wrap_future
//     does with run_coroutine_threadsafe's future).
// The call counts as outside work on A (a virtual-time loop waits for it)
// until its outcome is back or its future is cancelled.

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// crossNode links the calls in flight from one loop (its goroutine only);
// a loop's grp.calls is the sentinel.
type crossNode struct {
	prev, next *crossNode
	target     *Loop
	call       crossCallOps
}

// crossCallOps is a call of any result type, as its calling loop's list
// holds it.
type crossCallOps interface {
	targetClosed()
	callerClosed()
	future() *futureCore
	remote() (name, id string)
}

func (n *crossNode) unlink() {
	if n.next != nil {
		n.prev.next, n.next.prev = n.next, n.prev
		n.prev, n.next = nil, nil
	}
}

// link lists n on l (l's goroutine).
func (l *Loop) linkCross(n *crossNode) {
	h := &l.grp.calls
	if h.next == nil {
		h.prev, h.next = h, h
	}
	n.prev, n.next = h.prev, h
	h.prev.next = n
	h.prev = n
}

// crossLink is a registration with a loop's foreign waiters
// (threadsafeFuture): when that loop closes, failClosed runs.
type crossLink struct {
	caller, target *Loop // target nil: the caller's own registration
}

func (k *crossLink) failClosed() {
	if k.target == nil { // the calling loop closes (its goroutine)
		k.caller.failCrossCalls(nil)
		// The loops it called no longer need to tell it anything.
		for target, link := range k.caller.grp.targets {
			target.forgetThreadsafeFuture(link)
		}
		k.caller.grp.targets = nil
		return
	}
	caller, target := k.caller, k.target
	_, _ = caller.CallSoonThreadsafe(func() {
		caller.failCrossCalls(target)
		// A closed target is never called again (registerCross refuses
		// it): a long-lived caller must not keep it reachable.
		if caller.grp.targets[target] == k {
			delete(caller.grp.targets, target)
		}
	})
}

// failCrossCalls ends l's calls in flight to target (nil: l is closing,
// every call).
func (l *Loop) failCrossCalls(target *Loop) {
	h := &l.grp.calls
	if h.next == nil {
		return
	}
	for n := h.next; n != h; {
		next := n.next
		if target == nil {
			n.unlink()
			n.call.callerClosed()
		} else if n.target == target {
			n.call.targetClosed() // unlinks n
		}
		n = next
	}
}

// registerCross makes sure l hears of its own Close and of target's, for
// its calls in flight. It reports false when target is closed. l's
// goroutine.
func (l *Loop) registerCross(target *Loop) bool {
	if l.grp.targets[target] == nil {
		k := &crossLink{caller: l, target: target}
		if !target.trackThreadsafeFuture(k) {
			return false
		}
		if l.grp.targets == nil {
			l.grp.targets = map[*Loop]*crossLink{}
		}
		l.grp.targets[target] = k
	}
	if !l.grp.linked {
		l.grp.linked = l.trackThreadsafeFuture(&crossLink{caller: l})
	}
	return true
}

// crossCall is one call in flight from loop from to loop to.
type crossCall[V any] struct {
	fut      Future[V]    // on from
	extras   futureExtras // fut's, lent (its own cancel)
	from, to *Loop
	fn       func(*T) (V, error)
	ffn      func() (V, error) // CallFuncOn: a callback on to, no task
	node     crossNode
	// The handle of the call's two trips, embedded rather than allocated
	// by CallSoonThreadsafe: start to to, then, once it has run there, the
	// outcome back to from (its fn is trip, which tells them apart).
	h Handle

	// released: the call no longer counts as outside work on from
	// (from's goroutine only).
	released bool

	mu        sync.Mutex
	cancelled bool // from gave up: the future was cancelled, or from closed
	task      *Task[V]
	// The remote task's name and address as it was created, for
	// snapshots of from: copied, not formatted, since a call is seldom
	// looked at (remote formats them).
	remoteName    string
	remoteNameSeq uint32
	// sent: the outcome is written and on its way to from (for from's
	// Close: outcomeAtKill). Here, it fills remoteNameSeq's padding:
	// crossCall[int] stays in the 352-byte size class.
	sent       atomic.Bool
	remoteAddr uintptr

	// The outcome, written on to before it is sent to from.
	v         V
	err       error
	remoteEnd bool // the remote task ended cancelled, with msg
	msg       string
}

func (c *crossCall[V]) future() *futureCore { return &c.fut.futureCore }

func (c *crossCall[V]) remote() (name, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.remoteAddr == 0 {
		return "", ""
	}
	name = c.remoteName
	if c.remoteNameSeq != 0 {
		name = taskSeqName(c.remoteNameSeq)
	}
	return name, fmt.Sprintf("%#x", c.remoteAddr)
}

// crossAwait describes, for a snapshot of l, the cross-loop call a task
// awaits through f: the remote task and its loop (l's goroutine).
func (l *Loop) crossAwait(f *futureCore) (awaits, id string) {
	h := &l.grp.calls
	if h.next != nil {
		for n := h.next; n != h; n = n.next {
			if n.call.future() != f {
				continue
			}
			where := n.target.Name()
			if where == "" {
				where = "another loop"
			}
			if name, rid := n.call.remote(); rid != "" {
				return "cross-loop call: task '" + name + "' on " + where, rid
			}
			return "cross-loop call to " + where + " (not started yet)", futureID(f)
		}
	}
	return kindCrossCall.String(), futureID(f)
}

// targetClosed: to closed with the call in flight (from's goroutine). A
// remote task that was done before to closed, but whose done callback
// (taskDone) was still queued when to stopped, finished: its outcome is
// the call's, not an error saying the call did not finish. to is closed,
// so the task no longer changes (and to's Close happened before this
// runs: it reached from through from's CallSoonThreadsafe).
func (c *crossCall[V]) targetClosed() {
	c.mu.Lock()
	tk := c.task
	c.mu.Unlock()
	if tk == nil || !tk.Done() {
		c.deliver(*new(V), errTargetClosed(), false, "")
		return
	}
	v, cancelled, msg, err := remoteOutcome(tk)
	c.deliver(v, err, cancelled, msg)
}

// remoteOutcome is the outcome of the done remote task tk as the call
// delivers it: its value and error, or, if it ended cancelled, the
// cancellation and its message. Reading it marks the error retrieved.
func remoteOutcome[V any](tk *Task[V]) (v V, cancelled bool, msg string, err error) {
	v, err = tk.Result()
	if !tk.Cancelled() {
		return v, false, "", err
	}
	if ce, ok := err.(*CancelledError); ok {
		msg = ce.Msg
	}
	return *new(V), true, msg, nil
}

// errTargetClosed is the outcome of a call whose target loop closed
// before the call finished.
func errTargetClosed() error {
	return &RuntimeError{Msg: "cross-loop call: the target loop was closed before the call finished", Err: ErrLoopClosed}
}

// callerClosed: from closes with the call in flight; nobody awaits the
// outcome any more, so the remote task is cancelled.
func (c *crossCall[V]) callerClosed() { c.giveUp("the calling loop was closed") }

// giveUp records that from no longer waits and cancels the remote task
// (or keeps it from starting). Any goroutine.
func (c *crossCall[V]) giveUp(msg string) {
	c.mu.Lock()
	if c.cancelled {
		c.mu.Unlock()
		return
	}
	c.cancelled = true
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
// cancelled at once. The outcome counts from the moment it is back on
// owner's loop: a task cancelled after that but before it resumed still
// gets it, the cancellation kept for its next await (the remote effect
// happened and is not reported as undone); an outcome still on its way
// when the future is cancelled is dropped, as asyncio drops it for
// wrap_future(run_coroutine_threadsafe(...)), since the caller cannot
// know whether the remote side has finished. If target closes before the task is done the future
// fails with an error wrapping ErrLoopClosed; if owner's loop closes first
// the remote task is cancelled. While the call is in flight it counts as
// outside work for owner's loop: on virtual time that loop waits for the
// call instead of moving its clock or reporting ErrDeadlock.
//
// A nil target or fn panics with a *ValueError. SubmitTo returns an error,
// and changes nothing, when target is owner's own loop (use CreateTask),
// when target or owner's loop is closed (the error wraps ErrLoopClosed),
// and when owner's loop is running (or held by a task) on another
// goroutine than the caller's (the error is a *RuntimeError; a plain
// goroutine uses RunCoroutineThreadsafe). A loop that is not running
// belongs to whoever drives it next, so, as with CallSoon, the caller may
// submit from outside before running it.
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
// (errors, cancellation, either loop closing): cancelling t before fn ran
// keeps fn from running; once fn has run, cancelling t before the result
// is back drops the result, and a result already back is returned with
// the cancellation kept for t's next await.
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
	return nil
}

func submitTo[V any](from, target *Loop, fn func(*T) (V, error), ffn func() (V, error), op string) (*Future[V], error) {
	if err := checkCrossCall(from, target, op); err != nil {
		return nil, err
	}
	if !from.registerCross(target) {
		return nil, &RuntimeError{Msg: op + ": the target loop is closed", Err: ErrLoopClosed}
	}
	c := &crossCall[V]{from: from, to: target, fn: fn, ffn: ffn}
	fut := &c.fut
	fut.loop = from
	fut.kind = kindCrossCall
	fut.outside = true     // an outcome back on from outlives a late cancel (cancel.go)
	fut.extras = &c.extras // lent: its own cancel, below
	if from.debug {
		c.extras.unretrieved = newUnretrieved(1)
	}
	// One func value for every step (start, the remote task's done
	// callback, delivered: see trip), so that a call allocates one
	// method value, not three.
	c.h.fn = c.trip
	if err := target.pushThreadsafe(&c.h); err != nil {
		return nil, &RuntimeError{Msg: op + ": the target loop is closed", Err: ErrLoopClosed}
	}
	c.node.target, c.node.call = target, c
	from.linkCross(&c.node)
	from.addExternal(1)
	fut.setOps(&c.extras, c) // cancel and outcomeAtKill below
	return fut, nil
}

// cancel is the future's (the awaiting task was cancelled, or the caller
// cancelled a SubmitTo future): the remote task is cancelled with msg and
// the future at once (docs/every-core.md, "How a cross-loop call works").
func (c *crossCall[V]) cancel(_ *futureCore, msg string) bool {
	fut := &c.fut
	if fut.state != statePending {
		// As Future.cancel: false, and the error counts as retrieved
		// (EXC-3; CPython's wrap_future of run_coroutine_threadsafe).
		return fut.cancelPlain(msg)
	}
	c.release()
	c.node.unlink()
	c.giveUp(msg)
	return fut.cancelPlain(msg)
}

// outcomeAtKill is for from's Close, which unwinds the task awaiting the
// call (T.park): a call that ended on to, its outcome on its way back,
// settles the future with it (the remote effect happened), unless the
// remote task ended cancelled.
func (c *crossCall[V]) outcomeAtKill() bool {
	if !c.sent.Load() || c.remoteEnd {
		return false
	}
	c.release()
	c.node.unlink()
	c.fut.settleUnwinding(c.v, c.err)
	return true
}

// release stops counting the call as outside work on from (from only).
func (c *crossCall[V]) release() {
	if !c.released {
		c.released = true
		c.from.addExternal(-1)
	}
}

// trip is the call's one func value, for each step in turn: start on to;
// for the task form, taskDone, the remote task's done callback (task is
// set, on to, by start); then delivered on from, once finish has sent the
// outcome (sent is stored before the push that makes that trip).
func (c *crossCall[V]) trip() {
	switch {
	case c.sent.Load():
		c.delivered()
	case c.task != nil: // to's goroutine, which set it
		c.taskDone()
	default:
		c.start()
	}
}

// start runs on to: it creates the remote task (or runs the function).
func (c *crossCall[V]) start() {
	c.mu.Lock()
	if c.cancelled {
		c.mu.Unlock()
		return
	}
	if c.ffn != nil {
		c.mu.Unlock()
		c.v, c.err = callFuncRecovered(c.ffn)
		c.finish()
		return
	}
	task := CreateTask(c.to, c.fn)
	c.task = task
	c.remoteName, c.remoteNameSeq, c.remoteAddr = task.t.name, task.t.nameSeq, uintptrOf(&task.t)
	c.mu.Unlock()
	if task.Done() { // an eager task that finished at once
		c.taskDone()
		return
	}
	task.AddDoneCallback(c.h.fn) // trip: taskDone now
}

// taskDone runs on to when the remote task is done.
func (c *crossCall[V]) taskDone() {
	c.v, c.remoteEnd, c.msg, c.err = remoteOutcome(c.task)
	c.mu.Lock()
	gaveUp := c.cancelled
	c.mu.Unlock()
	if c.remoteEnd && c.to.grp.shuttingDown && !gaveUp {
		// Cancelled by its loop's shutdown (Runner.Close, LoopGroup.Close),
		// not by the caller: the target closed before the call finished.
		c.err, c.remoteEnd, c.msg = errTargetClosed(), false, ""
	}
	c.finish()
}

// finish sends the outcome from to back to from. A closed from refuses
// the delivery; its Close cancelled the call.
func (c *crossCall[V]) finish() {
	c.sent.Store(true)              // before the push: this trip of h is delivered
	_ = c.from.pushThreadsafe(&c.h) // h ran on to already: free again
}

// delivered runs on from with the outcome finish sent.
func (c *crossCall[V]) delivered() { c.deliver(c.v, c.err, c.remoteEnd, c.msg) }

// deliver runs on from: the outcome completes the future unless it was
// completed meanwhile (cancelled, or given a result with SetResult). Either
// way the call is over: it stops counting as outside work and leaves the
// list of calls in flight.
func (c *crossCall[V]) deliver(v V, err error, cancelled bool, msg string) {
	c.release()
	c.node.unlink()
	f := &c.fut
	if f.state != statePending {
		return
	}
	switch {
	case cancelled:
		f.cancelPlain(msg)
	case err != nil:
		f.fail(err)
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
