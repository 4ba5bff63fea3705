package asyncio

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"weak"
)

type futureState uint8

const (
	statePending futureState = iota
	stateFinished
	stateCancelled
)

func (s futureState) String() string {
	switch s {
	case statePending:
		return "PENDING"
	case stateFinished:
		return "FINISHED"
	default:
		return "CANCELLED"
	}
}

// CallbackID identifies one registration of a done callback, for
// RemoveDoneCallback (Go funcs are not comparable).
type CallbackID uint64

// doneCallback is one registration: a user callback, or (task != nil) the
// wakeup of a task awaiting the future. awaiter, when set, is the future or
// task that waits through this callback (a combinator's outer future, a
// TaskGroup's parent): the awaited-by edge of call graphs (diag_callgraph.go).
// A registration with only awaiter set is a bare edge added by
// FutureAddToAwaitedBy: it is never scheduled.
type doneCallback struct {
	fn      func()
	task    *T
	id      CallbackID
	awaiter *futureCore
}

// futureExtras is what few futures have: registrations after the first
// awaiting task (futureCore.waiter), and a cancel of their own. It sits
// behind a pointer so that a future stays small (Future[struct{}] and
// Future[int] in the 64-byte size class): most futures never
// get a registration past the waiter. first is the room for the first
// registration, so that a list of one costs no allocation of its own.
// An object that owns a future with its own cancel can hold the extras
// and lend them (setOps), saving the allocation.
type futureExtras struct {
	items []doneCallback
	first [1]doneCallback
	// ops, when set, is the future's own cancel and its answer to Close
	// (futureOps): gather's outer future, a cross-loop call, a channel
	// operation, a Go call...
	ops futureOps
	// unretrieved is the record of an error nobody read (FUT-10), and in
	// debug mode of where the future was created; see watchUnretrieved.
	unretrieved *unretrieved
}

// futureOps is what a future whose outcome comes from elsewhere does in
// place of the plain Future's. It is an interface, not two funcs, so that
// the object that owns the future (a cross-loop call, a channel
// operation) is its own ops: setting them allocates nothing. cancelFunc
// and outcomeAtKillFunc adapt a closure for the rest.
type futureOps interface {
	// cancel replaces f's plain cancel (f.cancelPlain).
	cancel(f *futureCore, msg string) bool
	// outcomeAtKill is asked when Close unwinds the task awaiting f, still
	// pending (T.park): it settles f with the outcome of an outside
	// operation that already happened, and reports whether it did, so
	// that the await returns it instead of unwinding (a value taken from
	// a channel is not lost).
	outcomeAtKill() bool
}

// cancelFunc is a futureOps of its own cancel only: there is never an
// outcome at Close.
type cancelFunc func(msg string) bool

func (fn cancelFunc) cancel(_ *futureCore, msg string) bool { return fn(msg) }
func (cancelFunc) outcomeAtKill() bool                      { return false }

// outcomeAtKillFunc is a futureOps with the plain cancel and fn as its
// answer to Close.
type outcomeAtKillFunc func() bool

func (outcomeAtKillFunc) cancel(f *futureCore, msg string) bool { return f.cancelPlain(msg) }
func (fn outcomeAtKillFunc) outcomeAtKill() bool                { return fn() }

// extrasForWrite returns f's extras, allocated if f has none.
func (f *futureCore) extrasForWrite() *futureExtras {
	if f.extras == nil {
		f.extras = &futureExtras{}
	}
	return f.extras
}

// unretrievedRec is f's unretrieved record, nil if none.
func (f *futureCore) unretrievedRec() *unretrieved {
	if f.extras == nil {
		return nil
	}
	return f.extras.unretrieved
}

// registered returns f's registrations after the waiter, in order.
func (f *futureCore) registered() []doneCallback {
	if f.extras == nil {
		return nil
	}
	return f.extras.items
}

// register appends cb to f's registrations.
func (f *futureCore) register(cb doneCallback) {
	x := f.extrasForWrite()
	if x.items == nil {
		x.first[0] = cb
		x.items = x.first[:1]
		return
	}
	x.items = append(x.items, cb)
}

// unregister removes f's registration number i.
func (f *futureCore) unregister(i int) {
	items := f.extras.items
	f.extras.items = append(items[:i], items[i+1:]...)
}

// setOps makes ops f's cancel and answer to Close, in place of the plain
// ones. x, when not nil, is room for f's extras inside the object that
// owns f (nothing allocated), used if f has none yet.
func (f *futureCore) setOps(x *futureExtras, ops futureOps) {
	if f.extras == nil && x != nil {
		f.extras = x
	}
	f.extrasForWrite().ops = ops
}

// futureCore is the untyped state shared by Future[V] and Task[V].
type futureCore struct {
	loop  *Loop
	state futureState
	// errOnce is for a CANCELLED future: see err.
	errOnce bool
	// kind says what the future is for (a sleep, a lock's waiter, a
	// gather...), for dumps; it sits in padding and costs nothing.
	kind futureKind
	// outside: the outcome is the effect of an operation that already
	// happened outside the loop (a channel operation, a Go call, an
	// executor job), so a task cancelled after it completed still gets
	// it (see outcomeOutlivesCancel in cancel.go). Padding too.
	outside bool
	// err is the exception of a FINISHED future (nil: success). For a
	// CANCELLED future it is either, with errOnce, the error a task's
	// function ended with, which the first retrieval returns and later
	// ones replace by a fresh CancelledError (FUT-8); or nil or a
	// *CancelledError carrying the cancel message, copied by every
	// retrieval. One field serves both states (a future is only ever in
	// one), which keeps Future[int] at 64 bytes and Task[int] at 224.
	err error
	// waiter is a task awaiting the future that registered while
	// callbacks was empty, so it is woken before every entry of callbacks
	// (FUT-5 order). The common case, one task awaiting a future, then
	// needs no callbacks slice to be allocated.
	waiter *T
	// extras: registrations past the waiter, a cancel of its own, the
	// record of an unread error (futureExtras).
	extras *futureExtras
	// task is set when this is a task's future: Cancel means Task.cancel.
	task *T
}

// Awaitable is the untyped view of anything a task can await: *Future[V],
// *Task[V] and *T. It is sealed: only this package implements it.
type Awaitable interface {
	// Done reports whether the awaitable finished, failed or was cancelled.
	Done() bool
	// Cancelled reports whether it was cancelled.
	Cancelled() bool
	// Cancel requests cancellation (Future.cancel / Task.cancel); see the
	// concrete types for the contract.
	Cancel(msg ...string) bool
	// Err returns the stored error (nil after a success), a
	// *CancelledError if cancelled, or an *InvalidStateError if pending
	// (asyncio's exception()). It marks the error retrieved.
	Err() error
	// AddDoneCallback schedules fn with CallSoon when the awaitable is done
	// (at once if it is done already). fn never runs inline.
	AddDoneCallback(fn func()) CallbackID
	// RemoveDoneCallback removes the registration id and returns how many
	// registrations were removed (0 or 1).
	RemoveDoneCallback(id CallbackID) int
	// Loop returns the loop the awaitable belongs to.
	Loop() *Loop
	core() *futureCore
	valueAny() any // the value of a successful awaitable, untyped (GatherAny)
	isNil() bool   // a nil pointer in the interface (see coreOf)
}

// coreOf returns aw's state, panicking with a *ValueError that names op
// when aw is nil (or a nil *Future, *Task or *T).
func coreOf(aw Awaitable, op string) *futureCore {
	if aw == nil || aw.isNil() {
		panic(valueErrorf("%s: nil awaitable", op))
	}
	return aw.core()
}

// AwaitableOf is the typed view of *Future[V] and *Task[V].
type AwaitableOf[V any] interface {
	Awaitable
	// Result returns the value, or the error as Err does.
	Result() (V, error)
	// Await suspends the running task t until the awaitable is done, then
	// returns Result. It does not suspend when it is done already.
	Await(t *T) (V, error)
}

// LoopOwner says which loop an API works on: a *Loop, or the running
// task's *T (its loop). Functions that only need a loop (CreateTask,
// NewFuture, Gather, RunInExecutor, CurrentTask, AllTasks, ...) take a
// LoopOwner; functions that suspend take the running task *T. The interface
// is sealed.
type LoopOwner interface {
	ownerLoop() *Loop
}

// LoopOf returns owner's loop, for code built on this package that takes
// a LoopOwner itself (package aio's NewStreamReader, a user's combinator).
// It panics with a *ValueError on a nil owner.
func LoopOf(owner LoopOwner) *Loop { return loopOf(owner, "LoopOf") }

// loopOf is LoopOf for op: a nil owner (a nil interface, *Loop or *T) is
// a *ValueError naming op instead of a nil dereference.
func loopOf(owner LoopOwner, op string) *Loop {
	// Inlined: a *Loop is the common owner on the hot paths (NewFuture).
	if l, ok := owner.(*Loop); ok && l != nil {
		return l
	}
	return loopOfOther(owner, op)
}

func loopOfOther(owner LoopOwner, op string) *Loop {
	switch o := owner.(type) {
	case *Loop:
		if o != nil {
			return o
		}
	case *T:
		if o != nil {
			return o.fut.loop
		}
	case nil:
	default:
		return owner.ownerLoop()
	}
	panic(valueErrorf("%s: nil loop owner (pass a *Loop or the running task's *T)", op))
}

func (f *futureCore) done() bool { return f.state != statePending }

// Loop returns the loop the future belongs to (asyncio's get_loop).
func (f *futureCore) Loop() *Loop { return f.loop }

func (f *futureCore) core() *futureCore { return f }

// Done reports whether the future is finished or cancelled (asyncio's
// done()).
func (f *futureCore) Done() bool { return f.state != statePending }

// Cancelled reports whether the future was cancelled (asyncio's
// cancelled()).
func (f *futureCore) Cancelled() bool { return f.state == stateCancelled }

// resultErr is the error half of asyncio's result(): it also marks a
// stored exception retrieved.
func (f *futureCore) resultErr() error {
	if f.state == stateFinished { // inlined: the common case
		f.markRetrieved()
		return f.err
	}
	return f.resultErrNotFinished()
}

func (f *futureCore) resultErrNotFinished() error {
	switch f.state {
	case stateCancelled:
		return f.makeCancelledError()
	case statePending:
		return &InvalidStateError{Msg: "Result is not ready."}
	}
	f.markRetrieved()
	return f.err
}

// Err returns the stored error, nil after a success; a *CancelledError if
// cancelled; an *InvalidStateError if pending (asyncio's exception()). It
// marks the error retrieved.
func (f *futureCore) Err() error {
	switch f.state {
	case stateCancelled:
		return f.makeCancelledError()
	case statePending:
		return &InvalidStateError{Msg: "Exception is not set."}
	}
	f.markRetrieved()
	return f.err
}

// finish moves a pending future to FINISHED with err (nil: success; the
// typed value is stored by the caller) and schedules its callbacks.
func (f *futureCore) finish(err error) {
	f.state = stateFinished
	f.err = err
	if err != nil {
		f.watchUnretrieved(err)
	}
	f.scheduleCallbacks()
}

// scheduleCallbacks queues every registered callback with call_soon in
// registration order (FUT-5): nothing runs inline.
func (f *futureCore) scheduleCallbacks() {
	if w := f.waiter; w != nil {
		f.waiter = nil
		f.loop.queueStep(w, f)
	}
	if f.extras != nil { // inlined up to here: one awaiting task is the common case
		f.scheduleCallbackList()
	}
}

func (f *futureCore) scheduleCallbackList() {
	x := f.extras
	cbs := x.items
	if x.ops == nil && x.unretrieved == nil {
		f.extras = nil
	} else {
		// The cancel answers for the done future too, and the record
		// waits for the error to be read.
		x.items = nil
	}
	for _, cb := range cbs {
		if cb.fn != nil || cb.task != nil { // not a bare awaited-by edge
			f.loop.queueCallback(cb, f)
		}
	}
	if f.extras != nil {
		x.first = [1]doneCallback{}
	}
}

func (l *Loop) queueCallback(cb doneCallback, from *futureCore) {
	if cb.task != nil {
		l.queueStep(cb.task, from)
		return
	}
	l.callSoonFunc(cb.fn)
}

// queueStep schedules the step of task t woken by from. No goroutine
// check here: every way in (SetResult, SetException, cancel, a task
// finishing on the loop) has checked already, before changing any state
// (DEBUG-3).
func (l *Loop) queueStep(t *T, from *futureCore) {
	l.checkClosed()
	l.drainThreadsafe() // earlier CallSoonThreadsafe callbacks first (LOOP-1)
	l.ready.push(stepEntry(t, from))
}

func (f *futureCore) addDoneCallback(fn func()) CallbackID {
	f.loop.checkThread("AddDoneCallback")
	return f.addDoneCallbackFrom(fn, nil)
}

// addDoneCallbackFrom is addDoneCallback for a combinator: awaiter is the
// future (or task) waiting on f through fn, recorded as f's awaited-by edge.
func (f *futureCore) addDoneCallbackFrom(fn func(), awaiter *futureCore) CallbackID {
	if fn == nil {
		panic(valueErrorf("AddDoneCallback: nil callback"))
	}
	f.loop.callbackN++
	cb := doneCallback{fn: fn, id: f.loop.callbackN, awaiter: awaiter}
	if f.done() {
		f.loop.queueCallback(cb, f)
	} else {
		f.register(cb)
	}
	return cb.id
}

// AddDoneCallback schedules fn with CallSoon when the future is done, at
// once if it is done already (asyncio's add_done_callback). Callbacks run
// in registration order and never inline.
func (f *futureCore) AddDoneCallback(fn func()) CallbackID { return f.addDoneCallback(fn) }

func (f *futureCore) removeDoneCallback(id CallbackID) int {
	f.loop.checkThread("RemoveDoneCallback")
	for i, cb := range f.registered() {
		if cb.id == id && cb.fn != nil {
			f.unregister(i)
			return 1
		}
	}
	return 0
}

// RemoveDoneCallback removes the registration id and returns the number
// removed, 0 or 1 (asyncio's remove_done_callback).
func (f *futureCore) RemoveDoneCallback(id CallbackID) int { return f.removeDoneCallback(id) }

// # Errors nobody retrieved (FUT-10)
//
// A future that fails gets an unretrieved record, which the loop keeps in
// a list and a runtime cleanup watches. Whichever comes first reports the
// error: the cleanup, once the future is unreachable (through the loop,
// with CallSoonThreadsafe), or Close, for every record still listed. Any
// retrieval (Result, Err, an await, Cancel) withdraws it. The claimed flag
// makes the report happen once when the cleanup and Close race. The record
// must not reference the future, or the cleanup would never run: it names
// it through a weak pointer (owner), which gives the report its Future
// (asyncio's "future" key) while the future is alive, as it is when Close
// reports it, and nil once it was collected.

// unretrieved is the record of a failed future whose error nobody read;
// in debug mode it exists from the future's creation, for where it was
// created.
type unretrieved struct {
	loop    *Loop
	message string
	err     error
	pcs     []uintptr // debug mode: where the future or task was created
	index   int       // position in loop.unretrieved; -1: not listed
	seq     uint64    // order of failure, for Close's reports
	claimed atomic.Bool
	cleanup runtime.Cleanup
	// A failed task's repr, coroutine and debug-mode await graph
	// (origin.go).
	taskRepr   string
	fnPC       uintptr
	awaitChain string
	ctx        context.Context // the task's values when it failed
	// owner is the failed future or task, held weakly (see above); nil
	// for futures the package fails itself.
	owner weakAwaitable
}

// weakAwaitable names a failed future or task without keeping it
// reachable; awaitable returns it, or nil once it was collected.
type weakAwaitable interface{ awaitable() Awaitable }

// weakOf is the weakAwaitable of a *T or a *Future[V] (X is T or
// Future[V], P its pointer type).
type weakOf[X any, P interface {
	*X
	Awaitable
}] struct{ p weak.Pointer[X] }

func makeWeak[X any, P interface {
	*X
	Awaitable
}](p P) weakOf[X, P] {
	return weakOf[X, P]{weak.Make((*X)(p))}
}

func (w weakOf[X, P]) awaitable() Awaitable {
	if x := w.p.Value(); x != nil {
		return P(x)
	}
	return nil // not a nil P in an interface: a report with no Future
}

// newUnretrieved captures where a future or task is being created, in
// debug mode (asyncio's _source_traceback, DEBUG-4); skip is the number of
// frames above the caller of newUnretrieved to leave out.
func newUnretrieved(skip int) *unretrieved {
	var pcs [16]uintptr
	n := runtime.Callers(skip+2, pcs[:])
	return &unretrieved{pcs: append([]uintptr(nil), pcs[:n]...), index: -1}
}

// createdAt formats where the future or task was created (debug mode),
// "" if that is not known.
func (r *unretrieved) createdAt() string {
	if r == nil || len(r.pcs) == 0 {
		return ""
	}
	var b strings.Builder
	frames := runtime.CallersFrames(r.pcs)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			return b.String()
		}
	}
}

func (r *unretrieved) context() ExceptionContext {
	ctx := ExceptionContext{Message: r.message, Err: r.err, CreatedAt: r.createdAt(), Origin: r.origin(), AwaitChain: r.awaitChain, Context: r.ctx}
	if r.owner != nil {
		ctx.Future = r.owner.awaitable()
	}
	return ctx
}

// watchUnretrieved lists f's error as not retrieved yet (FUT-10).
func (f *futureCore) watchUnretrieved(err error) {
	x := f.extrasForWrite()
	r := x.unretrieved
	if r == nil {
		r = &unretrieved{}
		x.unretrieved = r
	}
	r.loop, r.err = f.loop, err
	r.message = "Future exception was never retrieved"
	if f.task != nil {
		r.message = "Task exception was never retrieved: " + quoteText(f.task.Name())
		r.recordFailure(f.task)
	}
	l := f.loop
	l.unretrievedSeq++
	r.seq = l.unretrievedSeq
	r.index = len(l.unretrieved)
	l.unretrieved = append(l.unretrieved, r)
	r.cleanup = runtime.AddCleanup(f, reportUnretrieved, r)
}

// markRetrieved withdraws the "exception was never retrieved" report.
func (f *futureCore) markRetrieved() {
	if f.extras != nil && f.extras.unretrieved != nil { // inlined: most futures have no record
		f.claimUnretrieved()
	}
}

func (f *futureCore) claimUnretrieved() {
	if r := f.extras.unretrieved; r.index >= 0 {
		f.extras.unretrieved = nil
		r.claimed.Store(true)
		r.cleanup.Stop()
		f.loop.unlistUnretrieved(r)
	}
}

// unlistUnretrieved removes r from the loop's list.
func (l *Loop) unlistUnretrieved(r *unretrieved) {
	i := r.index
	if i < 0 || i >= len(l.unretrieved) || l.unretrieved[i] != r {
		return
	}
	last := len(l.unretrieved) - 1
	l.unretrieved[i] = l.unretrieved[last]
	l.unretrieved[i].index = i
	l.unretrieved[last] = nil
	l.unretrieved = l.unretrieved[:last]
	r.index = -1
}

// reportUnretrieved is the cleanup of a failed future nobody read. It runs
// on a runtime goroutine: the report is made on the loop, unless the loop
// is closed already (then Close has reported it, or it was queued too late
// and the default handler logs it).
func reportUnretrieved(r *unretrieved) {
	l := r.loop
	_, err := l.CallSoonThreadsafe(func() {
		l.unlistUnretrieved(r)
		if r.claimed.CompareAndSwap(false, true) {
			l.CallExceptionHandler(r.context())
		}
	})
	if err != nil && r.claimed.CompareAndSwap(false, true) {
		l.DefaultExceptionHandler(r.context())
	}
}

// reportUnretrievedAtClose reports every error still not retrieved when
// the loop closes (issue 10 point 8): deterministically, not only when the
// garbage collector finds the future. The cleanups are stopped; a report
// the cleanup queued and Close discarded is made here.
func (l *Loop) reportUnretrievedAtClose() {
	// In the order they failed (the list is unordered). A handler that
	// fails more futures gets them reported too.
	for len(l.unretrieved) > 0 {
		rs := l.unretrieved
		l.unretrieved = nil
		slices.SortFunc(rs, func(a, b *unretrieved) int { return cmp.Compare(a.seq, b.seq) })
		for _, r := range rs {
			r.index = -1
			r.cleanup.Stop()
			if r.claimed.CompareAndSwap(false, true) {
				l.CallExceptionHandler(r.context())
			}
		}
	}
}

// Future is asyncio.Future: a result that will be set later, by a
// callback or a task, on one loop. Its methods must be called from the
// goroutine running the loop. Make it with NewFuture: the zero Future has
// no loop, and completing, cancelling or awaiting it panics with a
// *ValueError that says so.
type Future[V any] struct {
	// value comes first: a zero-size V (struct{}) last would be padded
	// (Go keeps a pointer to a final zero-size field inside the object),
	// putting Future[struct{}] in the 80-byte size class, not 64.
	value V
	futureCore
}

// NewFuture returns a pending future on owner's loop (asyncio's
// loop.create_future). Any goroutine may create one (it changes nothing on
// the loop); completing or awaiting it is for the loop's goroutine. As
// create_future, it works on a closed loop too: such a future can still
// be completed and read, but its done callbacks never run.
func NewFuture[V any](owner LoopOwner) *Future[V] {
	l := loopOf(owner, "NewFuture")
	f := &Future[V]{futureCore: futureCore{loop: l}}
	if l.debug {
		f.extrasForWrite().unretrieved = newUnretrieved(1)
	}
	return f
}

// SetResult finishes the future with v and schedules its callbacks
// (asyncio's set_result). It returns an *InvalidStateError if the future
// is already done.
func (f *Future[V]) SetResult(v V) error {
	if f.loop == nil || !f.loop.onLoop() { // before any change (DEBUG-3)
		f.loop.checkThread("Future.SetResult")
	}
	if f.state != statePending {
		return &InvalidStateError{Msg: fmt.Sprintf("%s: %v", f.state, f)}
	}
	f.value = v
	f.finish(nil)
	return nil
}

// settleUnwinding finishes the future with v or err without scheduling
// anything: its only awaiter is a task that Close is unwinding, which
// reads the outcome at once (outcomeAtKill), and the loop runs no more
// callbacks.
func (f *Future[V]) settleUnwinding(v V, err error) {
	f.value, f.err = v, err
	f.state = stateFinished
	f.waiter = nil
}

// SetException finishes the future with err and schedules its callbacks
// (asyncio's set_exception). It returns an *InvalidStateError if the
// future is already done, and a *RuntimeError for a nil err. A
// *CancelledError is stored as an ordinary error (gather does this,
// GATHER-3): the future is then done but not Cancelled; use Cancel to
// cancel it.
func (f *Future[V]) SetException(err error) error {
	f.loop.checkThread("Future.SetException") // before any change (DEBUG-3)
	if f.state != statePending {
		return &InvalidStateError{Msg: fmt.Sprintf("%s: %v", f.state, f)}
	}
	if err == nil {
		return runtimeErrorf("SetException: nil error")
	}
	f.fail(err)
	return nil
}

// fail finishes f with err, and lets a never-retrieved report name f
// (finish alone cannot: the weak reference needs f's type).
func (f *Future[V]) fail(err error) {
	f.finish(err)
	if r := f.unretrievedRec(); r != nil {
		r.owner = makeWeak(f)
	}
}

func (f *Future[V]) valueAny() any { return f.value }

func (f *Future[V]) isNil() bool { return f == nil }

// Result returns the value of a finished future; its error if it failed;
// a *CancelledError if it was cancelled; an *InvalidStateError if it is
// pending (asyncio's result()).
func (f *Future[V]) Result() (V, error) {
	if err := f.resultErr(); err != nil {
		var zero V
		return zero, err
	}
	return f.value, nil
}

// Cancel cancels a pending future and schedules its callbacks; msg, if
// given, is the cancellation message. It returns false if the future was
// already done (asyncio's cancel()).
func (f *Future[V]) Cancel(msg ...string) bool {
	f.loop.checkThread("Future.Cancel") // before any change (DEBUG-3)
	return f.cancel(joinMsg(msg))
}

// Await suspends the running task t until f is done and returns its
// Result. It does not suspend when f is already done (MODEL-3). If t is
// cancelled meanwhile, it returns a *CancelledError and f is cancelled too.
func (f *Future[V]) Await(t *T) (V, error) {
	// t.checkRunning, with its fast path written out (the hottest await).
	if t == nil || !t.fut.loop.onLoop() || t.fut.loop.current != t {
		t.checkRunning("Future.Await")
	}
	if f.state == statePending {
		if err := t.suspendOn(&f.futureCore); err != nil {
			var zero V
			return zero, err
		}
	}
	return f.Result()
}

// await is Await after the caller checked t.
func (f *Future[V]) await(t *T) (V, error) {
	if f.state == statePending {
		if err := t.suspendOn(&f.futureCore); err != nil {
			var zero V
			return zero, err
		}
	}
	return f.Result()
}

// repr is the asyncio-style repr of a future seen untyped: a task's as
// T.String, else Future.String's without the value (for messages that
// name a future, such as awaiting one of another loop).
func (f *futureCore) repr() string {
	switch {
	case f.task != nil:
		return f.task.String()
	case f.state == stateCancelled:
		return "<Future cancelled>"
	case f.state == stateFinished && f.err != nil:
		return fmt.Sprintf("<Future finished exception=%v>", f.err)
	case f.state == stateFinished:
		return "<Future finished>"
	}
	return "<Future pending>"
}

// String returns the asyncio-style repr, for logs and debugging.
func (f *Future[V]) String() string {
	switch f.state {
	case stateFinished:
		if f.err != nil {
			return fmt.Sprintf("<Future finished exception=%v>", f.err)
		}
		return fmt.Sprintf("<Future finished result=%v>", f.value)
	case stateCancelled:
		return "<Future cancelled>"
	}
	return "<Future pending>"
}

// futureKind says what a future is for, so a dump can say what a task
// awaits without a stack.
type futureKind uint8

const (
	kindPlain futureKind = iota
	kindSleep
	kindGather
	kindShield
	kindWait
	kindAsCompleted
	kindCancelWait
	kindTaskGroup
	kindLock
	kindEvent
	kindCondition
	kindSemaphore
	kindQueueGet
	kindQueuePut
	kindExecutor
	kindCrossCall
	kindQueueJoin
)

var kindNames = [...]string{
	kindPlain:       "future",
	kindSleep:       "sleep",
	kindGather:      "gather",
	kindShield:      "shield",
	kindWait:        "wait",
	kindAsCompleted: "as_completed",
	kindCancelWait:  "cancel-and-wait",
	kindTaskGroup:   "taskgroup",
	kindLock:        "Lock.Acquire",
	kindEvent:       "Event.Wait",
	kindCondition:   "Condition.Wait",
	kindSemaphore:   "Semaphore.Acquire",
	kindQueueGet:    "Queue.Get",
	kindQueuePut:    "Queue.Put",
	kindExecutor:    "executor",
	kindCrossCall:   "cross-loop call",
	kindQueueJoin:   "Queue.Join",
}

func (k futureKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "future"
}
