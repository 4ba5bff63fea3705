package asyncio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// defaultExecutorWorkers is the size of a loop's default executor,
// min(32, NumCPU+4), as for CPython's ThreadPoolExecutor().
func defaultExecutorWorkers() int { return min(32, runtime.NumCPU()+4) }

// executorJob is one call submitted to an executor.
type executorJob struct {
	ctx  context.Context
	run  func()
	loop *Loop

	// While the job waits, in ConcurrentFuture.Wait with its ctx, for a
	// result its own loop produces, it is not work that takes no virtual
	// time: it does not count in loop.external, so a loop on virtual time
	// may move its clock (or report a deadlock) meanwhile instead of
	// waiting for the job forever. blockedOn is that future's done
	// channel; whoever ends the wait first (the future's completion, the
	// job's cancellation on the loop, or the job itself) counts it again,
	// once, before the job can run on.
	mu        sync.Mutex
	blockedOn chan struct{}
}

// executorJobKey is the context key of the job a RunInExecutor ctx belongs
// to.
type executorJobKey struct{}

// jobOf returns the executor job whose ctx (or a context derived from it)
// ctx is, or nil.
func jobOf(ctx context.Context) *executorJob {
	j, _ := ctx.Value(executorJobKey{}).(*executorJob)
	return j
}

// block stops counting j in its loop's external work while it waits for
// done. The caller holds the lock of the future that closes done (lock
// order: the future's, then the job's) and then wakes the loop.
func (j *executorJob) block(done chan struct{}) {
	j.mu.Lock()
	j.blockedOn = done
	j.loop.addExternal(-1)
	j.mu.Unlock()
}

// unblock counts j again if it is still blocked on done (nil: on anything).
func (j *executorJob) unblock(done chan struct{}) {
	j.mu.Lock()
	if j.blockedOn != nil && (done == nil || j.blockedOn == done) {
		j.blockedOn = nil
		j.loop.addExternal(1)
	}
	j.mu.Unlock()
}

// executor is a loop's default executor (ThreadPoolExecutor): a FIFO of
// jobs served by at most max worker goroutines. Workers are started on
// demand and exit as soon as the queue is empty, so an idle executor holds
// no goroutine and needs no explicit shutdown to avoid leaks.
type executor struct {
	mu       sync.Mutex
	max      int
	workers  int
	queue    []*executorJob
	shutdown bool           // no more submissions (shutdown_default_executor or Close)
	inflight sync.WaitGroup // submitted jobs not yet finished (on the workers' side)
	used     bool           // a job was ever submitted (CPython: executor created)
	// undelivered counts the jobs submitted whose outcome has not reached
	// the loop yet (their function has not returned, or its outcome is on
	// its way), and drained holds the ShutdownDefaultExecutor calls
	// waiting for it to reach 0. The loop's goroutine only: the wait is
	// not outside work of its own (each job counts until its outcome is
	// back), so a job that waits for its loop in ConcurrentFuture.Wait
	// lets a virtual clock move during a shutdown too.
	undelivered int
	drained     []*Future[struct{}]
	// ctx is the parent of every job's context, cancelled when the loop
	// closes (cause: an error wrapping ErrLoopClosed).
	ctx       context.Context
	cancelAll context.CancelCauseFunc
	// custom, when set (SetDefaultExecutor), runs the jobs instead of the
	// built-in workers; the bookkeeping above stays the same for both.
	custom Executor
	loop   *Loop
}

// executorWorkers maps each running worker goroutine (its gid token) to
// its executor's loop: a LoopGroup.Close called from a job would wait
// for that job (Runner.Close shuts the executor down), and refuses
// instead (executorLoopOf).
var (
	executorWorkersMu sync.Mutex
	executorWorkers   = map[uint64]*Loop{}
)

// recordWorker records the calling goroutine as running jobs of ex's
// loop, and returns what undoes it (what the goroutine was before, if
// anything: a SetDefaultExecutor executor may run a job on a goroutine of
// its own choosing).
func (ex *executor) recordWorker() (undo func()) {
	tok := gid.Token()
	executorWorkersMu.Lock()
	prev, had := executorWorkers[tok]
	executorWorkers[tok] = ex.loop
	executorWorkersMu.Unlock()
	return func() {
		executorWorkersMu.Lock()
		if had {
			executorWorkers[tok] = prev
		} else {
			delete(executorWorkers, tok)
		}
		executorWorkersMu.Unlock()
	}
}

// executorLoopOf returns the loop whose executor runs the calling
// goroutine, nil if none does.
func executorLoopOf(tok uint64) *Loop {
	executorWorkersMu.Lock()
	defer executorWorkersMu.Unlock()
	return executorWorkers[tok]
}

// defaultExecutor returns l's executor, creating it (and its close hook) on
// first use. It must be called on l's goroutine.
func defaultExecutor(l *Loop) *executor {
	if l.executor != nil {
		return l.executor
	}
	ex := &executor{max: defaultExecutorWorkers(), loop: l}
	ex.ctx, ex.cancelAll = context.WithCancelCause(context.Background())
	l.executor = ex
	l.onClose(func() {
		// LOOP-11: Close shuts the executor down without waiting, and
		// their results are dropped. Unlike asyncio, which cannot stop its
		// threads, the jobs' contexts are cancelled, so that jobs not yet
		// started never run and running ones are asked to return: nothing
		// the loop started should outlive it.
		ex.mu.Lock()
		ex.shutdown = true
		ex.mu.Unlock()
		ex.cancelAll(errLoopClosed())
		l.executor = nil
	})
	return ex
}

func (ex *executor) submit(j *executorJob) error {
	ex.mu.Lock()
	if ex.shutdown {
		ex.mu.Unlock()
		return &RuntimeError{Msg: "Executor shutdown has been called"}
	}
	custom := ex.custom
	if custom == nil {
		ex.used = true
		ex.inflight.Add(1)
		ex.queue = append(ex.queue, j)
		if ex.workers < ex.max {
			ex.workers++
			go ex.work()
		}
		ex.mu.Unlock()
		return nil
	}
	ex.mu.Unlock()
	return ex.submitCustom(custom, j)
}

// submitCustom hands j to the executor of SetDefaultExecutor. Submit is
// the user's code: it runs without ex.mu, and a panic in it is a refusal.
// The job runs at most once, and only if the submission is not refused:
// an executor that refuses a job it already ran (or runs later) cannot
// make the loop count its outcome twice.
func (ex *executor) submitCustom(custom Executor, j *executorJob) (err error) {
	var claimed atomic.Bool // by the job starting, or by the refusal
	ex.inflight.Add(1)
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
		if err != nil && !claimed.Swap(true) {
			ex.inflight.Done()
			return
		}
		err = nil // the job started: its outcome comes back as usual
		ex.mu.Lock()
		ex.used = true
		ex.mu.Unlock()
	}()
	return custom.Submit(func() {
		if claimed.Swap(true) {
			return // refused meanwhile
		}
		defer ex.inflight.Done()
		defer ex.recordWorker()()
		j.run()
	})
}

func (ex *executor) work() {
	defer ex.recordWorker()() // also when a job ends the goroutine (runtime.Goexit)
	for {
		ex.mu.Lock()
		if len(ex.queue) == 0 {
			ex.workers--
			ex.mu.Unlock()
			return
		}
		j := ex.queue[0]
		ex.queue[0] = nil
		ex.queue = ex.queue[1:]
		ex.mu.Unlock()
		ex.runJob(j)
	}
}

// runJob runs j on a worker. A job whose function ends the goroutine
// (runtime.Goexit: t.FailNow in a test) takes the worker with it: a new
// worker takes its place, so that the pool keeps its size and the jobs
// queued behind still run.
func (ex *executor) runJob(j *executorJob) {
	returned := false
	defer func() {
		ex.inflight.Done()
		if !returned {
			go ex.work()
		}
	}()
	j.run()
	returned = true
}

// errFuncGoexit fails a Go call or executor job whose function ended its
// goroutine with runtime.Goexit (t.FailNow in a test): its outcome is
// gone, and the caller gets this instead of waiting for ever.
var errFuncGoexit = errors.New("asyncio: the function ended its goroutine through runtime.Goexit")

// callContained runs fn and hands its outcome to deliver in every case: a
// panic becomes a *PanicError, a runtime.Goexit errFuncGoexit (deliver
// then runs while the goroutine unwinds, and the goroutine goes on
// exiting).
func callContained[V any](ctx context.Context, fn func(ctx context.Context) (V, error), deliver func(V, error)) {
	var v V
	var err error
	returned := false
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		} else if !returned {
			err = errFuncGoexit
		}
		deliver(v, err)
	}()
	v, err = fn(ctx)
	returned = true
}

// RunInExecutor ports loop.run_in_executor(None, fn): it runs fn on l's
// default executor (a pool of at most defaultExecutorWorkers goroutines,
// created lazily) and returns a Future on l that receives fn's result
// through CallSoonThreadsafe (THREAD-2). Cancelling the Future cancels ctx
// (context.Cause: the Future's *CancelledError, with its message), and so
// does the loop's Close (an error wrapping ErrLoopClosed), as for Go; a
// job cancelled before it started is never run. A panic in fn fails only
// this Future, with a *PanicError. After ShutdownDefaultExecutor the Future
// fails with *RuntimeError "Executor shutdown has been called". Like
// CallSoon, it panics with an error wrapping ErrLoopClosed on a closed loop.
// It must be called on l's goroutine.
// While the job is in flight a virtual-time loop waits for it instead of
// reporting ErrDeadlock, except while the job waits, in
// ConcurrentFuture.Wait(ctx) with this ctx, for a result of the same loop
// (RunCoroutineThreadsafe): the loop then goes on, timers included.
func RunInExecutor[V any](owner LoopOwner, fn func(ctx context.Context) (V, error)) *Future[V] {
	l := loopOf(owner, "RunInExecutor")
	l.checkThread("RunInExecutor")
	return runInExecutor(l, context.Background(), fn)
}

// runInExecutor is RunInExecutor with ctx derived from parent.
func runInExecutor[V any](l *Loop, parent context.Context, fn func(ctx context.Context) (V, error)) *Future[V] {
	l.checkClosed() // like CallSoon and CreateTask: a closed loop panics
	if fn == nil {
		panic(valueErrorf("RunInExecutor: nil function"))
	}
	fut := NewFuture[V](l)
	fut.kind = kindExecutor
	fut.outside = true // a ready result outlives a late cancel (cancel.go)
	ex := defaultExecutor(l)
	job := &executorJob{loop: l}
	// ctx has parent's values and is cancelled with the future, or when
	// the loop closes (ex.ctx), with the cause of either, as a Go call's.
	ctx, cancelCause := context.WithCancelCause(context.WithValue(parent, executorJobKey{}, job))
	cancel := func() { cancelCause(nil) }
	stopCloseWatch := context.AfterFunc(ex.ctx, func() { cancelCause(context.Cause(ex.ctx)) })
	job.ctx = ctx
	// started is claimed by the job when it starts, or by its cancellation
	// before that: a job cancelled while queued is then over at once (it
	// no longer counts as outside work, nor for ShutdownDefaultExecutor)
	// and never runs, wherever it waits, even on an executor of
	// SetDefaultExecutor that never gets round to it.
	var started atomic.Bool
	// outcome is the job's, set before ready: for Close, which gives it to
	// a task it unwinds that awaits fut (outcomeAtKill; the delivery
	// queued for the loop is dropped).
	var outcome struct {
		v     V
		err   error
		ready atomic.Bool
	}
	job.run = func() {
		if started.Swap(true) {
			return // cancelled while queued: already accounted for
		}
		defer cancel()
		defer stopCloseWatch()
		// THREAD-5: copy the outcome on the loop, unless the destination was
		// cancelled meanwhile; a closed loop drops it.
		deliver := func(v V, err error) {
			outcome.v, outcome.err = v, err
			outcome.ready.Store(true)
			_, _ = l.CallSoonThreadsafe(func() {
				l.addExternal(-1)
				if !fut.Done() {
					if err != nil {
						_ = fut.SetException(err)
					} else {
						_ = fut.SetResult(v)
					}
				}
				ex.delivered()
			})
		}
		if ctx.Err() != nil || ex.ctx.Err() != nil { // (AfterFunc cancels ctx a moment later)
			// Cancelled before it started: like concurrent.futures, never run.
			deliver(*new(V), &CancelledError{Msg: ""})
			return
		}
		callContained(ctx, fn, deliver)
	}
	l.addExternal(1)
	if err := ex.submit(job); err != nil {
		l.addExternal(-1)
		stopCloseWatch()
		cancel()
		_ = fut.SetException(err)
		return fut
	}
	ex.undelivered++
	fut.AddDoneCallback(func() {
		if fut.Cancelled() {
			if !started.Swap(true) {
				// Not started: it never will.
				stopCloseWatch()
				cancelCause(fut.Err())
				l.addExternal(-1)
				ex.delivered()
				return
			}
			job.unblock(nil) // it runs on: count it before the loop looks again
			cancelCause(fut.Err())
		}
	})
	fut.setOps(nil, outcomeAtKillFunc(func() bool {
		if !outcome.ready.Load() {
			return false
		}
		fut.settleUnwinding(outcome.v, outcome.err)
		return true
	}))
	return fut
}

// SetDefaultExecutor ports loop.set_default_executor(executor): from now
// on RunInExecutor and ToThread on l submit their jobs to ex instead of
// the loop's own pool (at most min(32, NumCPU+4) goroutines). Nothing
// else changes: a job's ctx carries the task's context values and is
// cancelled with its future and when the loop closes, the job counts as
// outside work until its outcome is back, ShutdownDefaultExecutor waits
// for the jobs of either executor and refuses later ones. Jobs already
// submitted finish where they are. A job whose future is cancelled
// before ex starts it is over at once (it holds neither a virtual clock
// nor ShutdownDefaultExecutor) and does nothing when ex gets round to
// it. ex.Submit is called on the loop's
// goroutine and must not block; a refused submission fails that job's
// future with Submit's error, a panic in Submit with a *PanicError. The
// loop never shuts ex down (asyncio's close calls shutdown(wait=False) on
// it; an Executor has no such method): it belongs to the caller. A nil ex
// is a *ValueError (asyncio's TypeError), and a closed loop an error
// wrapping ErrLoopClosed, both before any change. Call it on the loop's
// goroutine, or before the loop runs; WithDefaultExecutor sets it from
// the start.
func (l *Loop) SetDefaultExecutor(ex Executor) error {
	l.checkThread("SetDefaultExecutor")
	if ex == nil {
		return valueErrorf("SetDefaultExecutor: nil executor")
	}
	if l.closed {
		return errLoopClosed()
	}
	d := defaultExecutor(l)
	d.mu.Lock()
	d.custom = ex
	d.mu.Unlock()
	return nil
}

// ToThread ports asyncio.to_thread: it runs fn on the default executor of
// t's loop and waits for its result (THREAD-3). ctx carries t's context
// values (to_thread copies the contextvars context). If t is cancelled
// while waiting, ctx is cancelled and ToThread returns the CancelledError
// at once, without waiting for fn to return; but if fn's result is back
// before t resumed, ToThread returns it and the CancelledError comes at t's
// next await (a ready result is not lost, cancel.go). A panic in fn is returned as
// a *PanicError. For blocking calls that should not queue behind the
// bounded pool, use Go.
func ToThread[V any](t *T, fn func(ctx context.Context) (V, error)) (V, error) {
	t.checkRunning("ToThread")
	return runInExecutor(t.Loop(), t.baseContext(), fn).Await(t)
}

// ShutdownDefaultExecutor ports loop.shutdown_default_executor(): later
// RunInExecutor/ToThread calls on t's loop fail with *RuntimeError
// "Executor shutdown has been called", and t waits until every job already
// submitted has finished (its outcome is back on the loop). It returns at
// once if the executor was never used. If t is cancelled it returns the
// CancelledError (the jobs keep running). While it waits, only the jobs
// count as outside work: a job waiting in ConcurrentFuture.Wait for its
// loop lets a virtual clock move, as it does outside a shutdown. t must be
// the running task (otherwise it panics, before any change).
func ShutdownDefaultExecutor(t *T) error {
	t.checkRunning("ShutdownDefaultExecutor")
	l := t.Loop()
	ex := defaultExecutor(l)
	ex.mu.Lock()
	ex.shutdown = true
	used := ex.used
	ex.mu.Unlock()
	if !used {
		return nil
	}
	// As asyncio's joining thread, the wait ends through the loop: t
	// suspends at least once.
	fut := NewFuture[struct{}](l)
	if ex.undelivered == 0 {
		l.CallSoon(func() { ex.drain(fut) })
	} else {
		live := ex.drained[:0]
		for _, w := range ex.drained { // (the waits cancelled meanwhile)
			if !w.Done() {
				live = append(live, w)
			}
		}
		ex.drained = append(live, fut)
	}
	_, err := fut.Await(t)
	return err
}

// ShutdownDefaultExecutorTimeout ports
// loop.shutdown_default_executor(timeout) (3.12+): ShutdownDefaultExecutor,
// waiting at most timeout on the loop's clock (asyncio's
// timeouts.timeout(timeout); 0 or less expires at the first suspension).
// If jobs are still running then, it logs the warning asyncio gives
// ("The executor did not finish joining its threads within ...", with
// slog.Warn for Python's RuntimeWarning) and returns nil: the executor is
// shut down all the same, the jobs run on, and their outcomes still come
// back to the loop. A cancellation of t, or an enclosing timeout that
// expires first, is returned as for any await. t must be the running
// task (otherwise it panics, before any change).
func ShutdownDefaultExecutorTimeout(t *T, timeout time.Duration) error {
	t.checkRunning("ShutdownDefaultExecutorTimeout")
	err := Timeout(t, timeout, func(*TimeoutScope) error { return ShutdownDefaultExecutor(t) })
	var te *TimeoutError
	if errors.As(err, &te) { // this timeout's: an enclosing one's is a cancellation here
		slog.Warn(fmt.Sprintf("The executor did not finish joining its threads within %v", timeout))
		return nil
	}
	return err
}

// delivered runs on the loop when a job's outcome is back: the last one
// ends the waits of ShutdownDefaultExecutor.
func (ex *executor) delivered() {
	ex.undelivered--
	if ex.undelivered > 0 {
		return
	}
	waits := ex.drained
	ex.drained = nil
	for _, w := range waits {
		ex.drain(w)
	}
}

// drain ends one wait of ShutdownDefaultExecutor (not cancelled meanwhile).
func (ex *executor) drain(w *Future[struct{}]) {
	if !w.Done() {
		_ = w.SetResult(struct{}{})
	}
}

// executorJoinTimeout is how long Runner.Close waits for the default
// executor's jobs (CPython's THREAD_JOIN_TIMEOUT, 300 s of real time); a
// variable so that tests can shorten it.
var executorJoinTimeout = 300 * time.Second

// shutdownDefaultExecutorForRunner is step 3 of Runner.Close (RUN-3): run
// ShutdownDefaultExecutor on l, which must not be running, until every job
// already submitted has finished. It does nothing if l never used its
// executor. After executorJoinTimeout it gives up as CPython 3.12+ does
// (with a warning, leaving the jobs running), and first cancels the jobs'
// contexts: a job that waits on its ctx would otherwise keep Run waiting
// for a cancellation that only Close, after this step, would send.
func shutdownDefaultExecutorForRunner(l *Loop) error {
	if l.IsClosed() {
		return nil
	}
	ex := l.executor
	if ex == nil {
		return nil
	}
	task := CreateTask(l, func(t *T) (struct{}, error) { return struct{}{}, ShutdownDefaultExecutor(t) })
	// Set by the timer itself, before it cancels the jobs' contexts: a job
	// that returns once its context is done may end the join before a
	// callback queued here would run, and the join did time out.
	var timedOut atomic.Bool
	timer := time.AfterFunc(executorJoinTimeout, func() {
		timedOut.Store(true)
		ex.cancelAll(errLoopClosed()) // Runner.Close is closing the loop
		_, _ = l.CallSoonThreadsafe(func() { task.Cancel() })
	})
	err := l.RunUntilComplete(task)
	timer.Stop()
	if timedOut.Load() {
		slog.Warn(fmt.Sprintf("The executor did not finish joining its threads within %v; "+
			"the jobs' contexts were cancelled", executorJoinTimeout))
		return nil
	}
	return err
}
