package asyncio

// Calling ordinary Go code: work that runs on other goroutines and comes
// back to the loop. Go awaits a blocking call on a goroutine of its own;
// RunInExecutorOn hands a call to a user's executor; Recv and Send
// (chan.go) await channel operations. Each is an outsideCall: counted as
// outside work while in flight (a virtual-time loop waits for it instead of
// reporting ErrDeadlock, and gives up waiting once the await is cancelled),
// tracked by its loop so that Close can cancel its context, and delivered
// through CallSoonThreadsafe. ExpectExternal gives user code that completes
// futures from other goroutines the same counting.

import (
	"context"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
)

// outsideCall is one call in flight on another goroutine.
type outsideCall struct {
	loop *Loop
	// cancelCtx cancels the call's context (Go, executor jobs); a channel
	// operation has stop instead, closed once (stopped) to make its helper
	// give up.
	cancelCtx context.CancelCauseFunc
	stop      chan struct{}
	stopped   bool
	// released: the call no longer holds the virtual clock (its result
	// came back, or its await was cancelled). Loop goroutine only.
	released bool
	// running is true until the goroutine's function has returned.
	running atomic.Bool
	// For the report at Close (Go calls only): the function and the task
	// that awaited it.
	report bool
	fn     any
	task   *T
	// what the call is ("Go call", "Recv"...) and, on virtual time, the
	// pc of the call that started it, for the stall report (stall.go).
	what string
	site uintptr
	// prev, next link the loop's calls in flight (outsideCalls).
	prev, next *outsideCall
}

// outsideCalls is a loop's calls in flight: an intrusive list, so tracking
// a call costs no allocation. The close hook is registered with the first.
type outsideCalls struct {
	head outsideCall // sentinel
}

// track starts counting c as outside work and lists it for Close.
func (l *Loop) track(c *outsideCall) {
	if l.outside == nil {
		l.outside = &outsideCalls{}
		l.outside.head.prev, l.outside.head.next = &l.outside.head, &l.outside.head
		l.onClose(l.closeOutside)
	}
	h := &l.outside.head
	c.loop = l
	c.prev, c.next = h.prev, h
	h.prev.next = c
	h.prev = c
	l.addExternal(1)
}

// release stops counting c as outside work (idempotent).
func (c *outsideCall) release() {
	if !c.released {
		c.released = true
		c.loop.addExternal(-1)
	}
}

// untrack removes c from its loop's list once its result is back.
func (c *outsideCall) untrack() {
	c.release()
	if c.next != nil {
		c.prev.next, c.next.prev = c.next, c.prev
		c.prev, c.next = nil, nil
	}
	if c.cancelCtx != nil {
		c.cancelCtx(nil) // free the context's resources
	}
}

// abort makes the goroutine give up: cancels its context with cause, or
// closes stop. Loop goroutine only.
func (c *outsideCall) abort(cause error) {
	if c.cancelCtx != nil {
		c.cancelCtx(cause)
	} else if !c.stopped {
		c.stopped = true
		close(c.stop)
	}
}

// closeOutside runs when the loop closes: every call still in flight has
// its context cancelled (cause ErrLoopClosed); a Go call whose function is
// still running is reported, since its goroutine now outlives the loop
// until the function returns.
func (l *Loop) closeOutside() {
	h := &l.outside.head
	for c := h.next; c != h; c = h.next {
		c.prev.next, c.next.prev = c.next, c.prev
		c.prev, c.next = nil, nil
		if c.report && c.running.Load() {
			ctx := ExceptionContext{
				Message: "Go call " + funcNameOf(c.fn) + " still running when the event loop closed; its context is cancelled",
				Err:     errLoopClosed(),
			}
			if c.task != nil && c.task.fut.loop == l {
				ctx.Task = c.task
			}
			l.CallExceptionHandler(ctx)
		}
		c.abort(errLoopClosed())
	}
	l.outside = nil
}

// outsideFuture is the future of a Go call or executor job with the call
// the loop tracks and fn's outcome, in one allocation.
type outsideFuture[V any] struct {
	fut Future[V] // first: the object a cleanup (watchUnretrieved) watches
	outsideCall
	// fn's outcome, written before running turns false: for Close, which
	// gives it to a task it unwinds that awaits fut (outcomeAtKill; the
	// delivery queued for the loop is dropped).
	v   V
	err error
	// For cancel: the held cancellation of a Go call (nil for an executor
	// job), and the job's waiter (see startOutside).
	held   *heldCancel
	waiter *executorJob
}

// cancel is the future's: see startOutside.
func (x *outsideFuture[V]) cancel(_ *futureCore, msg string) bool {
	fut, c := &x.fut, &x.outsideCall
	if fut.state != statePending {
		// As Future.cancel: false, and the error counts as retrieved
		// (EXC-3; CPython's run_in_executor future).
		return fut.cancelPlain(msg)
	}
	if x.held != nil && !c.running.Load() {
		// fn returned; its outcome is in CallSoonThreadsafe's queue.
		x.held.hold(msg)
		return true
	}
	c.cancelCtx(&CancelledError{Msg: msg})
	x.waiter.unblock(nil) // counted again, so that release takes it out once
	c.release()
	return fut.cancelPlain(msg)
}

func (x *outsideFuture[V]) outcomeAtKill() bool {
	if x.running.Load() {
		return false // Close cancels its context and reports it
	}
	x.untrack()
	x.fut.settleUnwinding(x.v, x.err)
	return true
}

// startOutside starts fn(ctx) on a new goroutine (or hands it to submit)
// and returns the future its outcome is delivered to, on l. parent is the
// context ctx derives from. Cancelling the future cancels ctx (cause: the
// *CancelledError) and releases the virtual clock at once; fn's late
// outcome is then dropped. A panic in fn fails the future with a
// *PanicError. submit, when not nil, runs the job instead of a goroutine;
// its error (or panic) fails the future. With held set (Go, whose future
// only its task awaits), a cancellation that comes once fn has returned is
// held until fn's outcome arrives, which the future then gets (see
// heldCancel): fn's effect has happened.
func startOutside[V any](l *Loop, parent context.Context, fn func(ctx context.Context) (V, error), report bool, task *T, submit func(job func()) error, held *heldCancel, what string, site uintptr) *Future[V] {
	x := &outsideFuture[V]{fut: Future[V]{futureCore: futureCore{loop: l, outside: true}}, held: held}
	fut, c := &x.fut, &x.outsideCall
	// waiter lets fn wait for its own loop without holding the virtual
	// clock: ConcurrentFuture.Wait(ctx) stops counting the call while it
	// waits (as for an executor job), and counts it again before fn runs on.
	waiter := &executorJob{loop: l}
	x.waiter = waiter
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, executorJobKey{}, waiter))
	*c = outsideCall{cancelCtx: cancel, report: report, fn: fn, task: task, what: what, site: site}
	c.running.Store(true)
	fut.setOps(nil, x) // cancel and outcomeAtKill above
	l.track(c)
	job := func() {
		run := fn
		if submit != nil && ctx.Err() != nil {
			// An executor's job whose future was cancelled while it
			// waited in the executor's queue (or whose loop closed): as
			// concurrent.futures' cancelled pending future, never run.
			run = func(context.Context) (V, error) { return *new(V), context.Cause(ctx) }
		}
		callContained(ctx, run, func(v V, err error) {
			x.v, x.err = v, err
			c.running.Store(false)
			// A closed loop refuses the delivery: Close has already
			// cancelled ctx and dropped the call, and the result has
			// nowhere to go.
			_, _ = l.CallSoonThreadsafe(func() {
				c.untrack()
				if fut.state != statePending {
					return
				}
				if err != nil {
					_ = fut.SetException(err)
				} else {
					_ = fut.SetResult(v)
				}
			})
		})
	}
	if submit == nil {
		go job()
		return fut
	}
	if err := submitRecovered(submit, job); err != nil {
		c.running.Store(false)
		c.untrack()
		_ = fut.SetException(err)
	}
	return fut
}

// submitRecovered calls submit(job), turning a panic into a *PanicError.
func submitRecovered(submit func(func()) error, job func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	return submit(job)
}

// Go runs fn on a goroutine of its own and suspends the running task t
// until it returns, without holding the loop: the way to call blocking Go
// code (net/http, database/sql, os/exec, file I/O, a mutex) from a task.
// It returns fn's result and error; a panic in fn is returned as a
// *PanicError.
//
// ctx carries t's context values (T.Context, ContextVar) and is cancelled
// when t is cancelled while waiting (or the context t's base derives from
// is done). Go then returns the *CancelledError at once, without waiting
// for fn: pass ctx to what fn calls (http.NewRequestWithContext,
// QueryContext, exec.CommandContext) so that the work stops too; fn's late
// result is dropped. But once fn has returned, its effect has happened: a
// cancellation that comes later (fn's outcome on its way to the loop, or
// back and t not yet resumed) does not replace the outcome; Go returns it,
// and the *CancelledError comes at t's next await (a task whose function
// returns before that await ends with its result). There is no pool: one
// goroutine per call, so calls do not queue behind each other (ToThread
// runs on the bounded default executor instead).
//
// While fn runs it is outside work: a virtual-time loop waits for it
// rather than moving its clock or reporting ErrDeadlock (a Go call takes
// no virtual time; one that never returns holds the clock until it is
// cancelled) — except while fn waits, in ConcurrentFuture.Wait with ctx,
// for work of the same loop (RunCoroutineThreadsafe): then the loop's
// clock moves on, and fn counts again before it runs on. If the loop closes while fn runs, ctx is cancelled and the
// exception handler is told; the goroutine ends when fn returns — a fn
// that ignores ctx keeps its goroutine (the caller's) running until then,
// but Close does not wait for it.
//
// t must be the running task and fn not nil; otherwise Go panics (a
// *ValueError for nil arguments), before starting anything.
func Go[V any](t *T, fn func(ctx context.Context) (V, error)) (V, error) {
	if t == nil {
		panic(&ValueError{Msg: "Go: nil task"})
	}
	if fn == nil {
		panic(&ValueError{Msg: "Go: nil function"})
	}
	t.checkRunning("Go") // the calling goroutine too, before any change
	if t.killed {
		var zero V
		return zero, t.awaitKilled() // unwinding at Close: start nothing
	}
	var held heldCancel
	l := t.fut.loop
	v, err := startOutside(l, t.baseContext(), fn, true, t, nil, &held, "Go call", l.outsideSite(0)).Await(t)
	held.rearm(t, err) // fn's outcome won: the cancellation comes next
	return v, err
}

// Executor runs jobs on goroutines of its own: a worker pool, a rate
// limiter, anything that runs a func later (concurrent.futures.Executor's
// submit). Submit is called on the loop's goroutine and must not block:
// queue the job and return. An error means the job was refused and will
// not run; it becomes the error of RunInExecutorOn's future.
type Executor interface {
	Submit(job func()) error
}

// RunInExecutorOn is loop.run_in_executor(ex, fn) with a user's executor:
// it submits a job to ex that runs fn(ctx) and delivers its outcome to the
// returned future on owner's loop through CallSoonThreadsafe. As
// run_in_executor (THREAD-2), ctx carries none of the calling task's
// context values (ToThread and Go do; or close over t.Context()), and it is
// cancelled when the future is cancelled (then the loop stops waiting for
// the job, and its late outcome is dropped: an executor that never runs
// the job cannot hold a cancelled task); a job that the executor starts
// after that never calls fn, as concurrent.futures never runs a pending
// future that was cancelled. A refused submission fails the
// future with Submit's error, a panic in Submit or in fn with a
// *PanicError. The job counts as outside work (see Go); Close cancels ctx.
// A nil ex or fn panics with a *ValueError; a closed loop panics with an
// error wrapping ErrLoopClosed. Call it on the loop's goroutine.
func RunInExecutorOn[V any](owner LoopOwner, ex Executor, fn func(ctx context.Context) (V, error)) *Future[V] {
	l := loopOf(owner, "RunInExecutorOn")
	if ex == nil {
		panic(&ValueError{Msg: "RunInExecutorOn: nil executor"})
	}
	if fn == nil {
		panic(&ValueError{Msg: "RunInExecutorOn: nil function"})
	}
	l.checkThread("RunInExecutorOn")
	l.checkClosed()
	// As RunInExecutor: run_in_executor passes no contextvars on
	// (THREAD-2), and the job belongs to no task, so nothing of the
	// calling task's context (its values, the end of a bound Go context)
	// reaches it.
	return startOutside(l, context.Background(), fn, false, nil, ex.Submit, nil, "RunInExecutorOn job", l.outsideSite(0))
}

// ExpectExternal tells the loop that work on another goroutine will come
// back through CallSoonThreadsafe (a future completed from a worker, a
// callback from a C library) and returns the function that says it is
// over. Until release is called, a loop on virtual time waits for that
// work instead of moving its clock or reporting ErrDeadlock, as it does
// for Go calls and executor jobs. Call release after the last
// CallSoonThreadsafe of that work (defer it in the goroutine): it may be
// called from any goroutine, more than once (only the first call counts),
// and after the loop closed. ExpectExternal itself may be called from any
// goroutine, but before the work starts: a loop that already found nothing
// to wait for has returned ErrDeadlock.
func (l *Loop) ExpectExternal() (release func()) {
	l.addExternal(1)
	forget := l.expect(l.outsideSite(0)) // for the stall report (stall.go)
	var once sync.Once
	return func() {
		once.Do(func() {
			if forget != nil {
				forget()
			}
			// Through the loop: the decrement wakes a loop that sleeps
			// waiting for outside work, so it looks again.
			if _, err := l.CallSoonThreadsafe(func() { l.addExternal(-1) }); err != nil {
				l.addExternal(-1)
			}
		})
	}
}

// funcNameOf names a function value of any signature, for reports.
func funcNameOf(fn any) string {
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		return f.Name()
	}
	return "<func>"
}
