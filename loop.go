package asyncio

import (
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"
)

// Never is the deadline "no deadline" (asyncio's None) for timeouts.
const Never time.Duration = math.MaxInt64

const (
	// maxPollTimeout caps one wait for I/O (LOOP-3: asyncio's
	// MAXIMUM_SELECT_TIMEOUT of 24 hours).
	maxPollTimeout = 24 * time.Hour
	// Lazy timer removal (LOOP-4): rebuild the heap when more than half of
	// more than 100 scheduled timers are cancelled.
	minScheduledTimerHandles     = 100
	minCancelledTimerHandlesFrac = 0.5
	defaultSlowCallbackDuration  = 100 * time.Millisecond
)

// Loop is an event loop (asyncio.BaseEventLoop). Each iteration follows
// asyncio's _run_once: compute the poll timeout, poll for I/O, move due
// timers to the ready queue, then run exactly the handles that were ready
// when the iteration started.
//
// A Loop is not safe for concurrent use: only the goroutine currently
// running the loop (the one that called RunForever, or a task of the loop)
// may call its methods, except CallSoonThreadsafe, which any goroutine may
// call.
type Loop struct {
	ready        readyQueue
	snapshotLeft int // entries of the current iteration's snapshot not yet run

	timers          timerHeap
	cancelledTimers int
	timerSeq        uint64

	virtual    bool
	virtualNow time.Duration
	epoch      time.Time

	running    bool
	stopping   bool
	closed     bool
	deadlocked bool

	current   *T   // the task whose step is running, nil in callbacks
	tasks     []*T // not-done tasks, for AllTasks and Close
	callbackN CallbackID

	// I/O: the selector is created the first time a file descriptor is
	// registered, so a loop without I/O never makes a system call.
	sel      selector
	fds      map[int]*fdHandlers
	ioEvents []ioEvent

	// Cross-goroutine scheduling (CallSoonThreadsafe).
	threadsafeMu      sync.Mutex
	threadsafePending []*Handle
	threadsafeFlag    atomic.Bool   // threadsafePending is non-empty
	sleepMode         int           // guarded by threadsafeMu: how to wake a blocked loop
	wakeCh            chan struct{} // wakes a loop blocked without a selector
	sleepTimer        *time.Timer
	external          atomic.Int64 // work in flight on other goroutines (executors)

	exceptionHandler func(*Loop, ExceptionContext)
	debug            bool
	slowCallback     time.Duration
	holderGoroutine  uint64 // debug mode: goroutine currently running the loop
	stepStart        time.Time

	// diagOn is the one flag the hot paths test: some diagnostic is on
	// (debug mode, a WithTask* option, step timing, runtime/trace, the
	// cancellation tester). It is refreshed every iteration, since
	// tracing can start at any time (introspect.go, trace.go).
	diagOn    bool
	diagFlags diagFlags
	metrics   loopMetrics // counters and hooks (metrics.go)
	// cancelLog is a ring of the last cancel requests, who cancelled whom
	// (introspect.go); allocated at the first one.
	cancelLog     []cancelRecord
	cancelLogNext uint64

	closeHooks []func()
	executor   *executor // the default executor, created on first use

	handleSlab []Handle // unused Handles for CallSoon; see newHandle
}

const (
	sleepAwake = iota
	sleepOnChannel
	sleepOnSelector
)

type fdHandlers struct {
	reader, writer *Handle
}

// NewLoop returns a new, not yet running event loop
// (asyncio.new_event_loop).
func NewLoop(opts ...LoopOption) *Loop {
	l := &Loop{
		epoch:        time.Now(),
		wakeCh:       make(chan struct{}, 1),
		slowCallback: defaultSlowCallbackDuration,
	}
	for _, o := range opts {
		o(l)
	}
	l.refreshDiag()
	return l
}

// NewTestLoop returns a loop on virtual time: NewLoop(WithVirtualTime()).
func NewTestLoop() *Loop { return NewLoop(WithVirtualTime()) }

func (l *Loop) ownerLoop() *Loop { return l }

// Time returns the loop's clock (asyncio's loop.time()): monotonic, in
// time.Duration since the loop was created (virtual time starts at 0).
func (l *Loop) Time() time.Duration {
	if l.virtual {
		return l.virtualNow
	}
	return time.Since(l.epoch)
}

// IsRunning reports whether the loop is running (asyncio's is_running).
func (l *Loop) IsRunning() bool { return l.running }

// IsClosed reports whether Close was called (asyncio's is_closed).
func (l *Loop) IsClosed() bool { return l.closed }

// SetDebug turns debug mode on or off (asyncio's set_debug): slow
// callbacks and task steps are reported, and loop methods called from a
// goroutine that is not running the loop panic.
func (l *Loop) SetDebug(on bool) {
	if on && !l.debug && l.running {
		// Called on the loop's goroutine: it holds the loop from now on.
		l.holderGoroutine = goroutineID()
	}
	l.debug = on
	l.refreshDiag()
}

// Debug reports whether debug mode is on (asyncio's get_debug).
func (l *Loop) Debug() bool { return l.debug }

// SetSlowCallbackDuration sets the debug-mode threshold above which a
// callback or task step is reported as slow (default 100 ms).
func (l *Loop) SetSlowCallbackDuration(d time.Duration) { l.slowCallback = d }

func (l *Loop) checkClosed() {
	if l.closed {
		panic(errLoopClosed())
	}
}

// noteHolder records, in debug mode, that the calling goroutine now runs
// the loop, for checkThread.
func (l *Loop) noteHolder() {
	if l.debug {
		l.holderGoroutine = goroutineID()
	}
}

// checkThread is asyncio's debug-mode _check_thread (DEBUG-3).
func (l *Loop) checkThread() {
	if !l.debug || !l.running {
		return
	}
	if goroutineID() != l.holderGoroutine {
		panic(runtimeErrorf("Non-thread-safe operation invoked on an event loop other than the current one"))
	}
}

// CallSoon schedules fn to run in a later iteration, after everything
// already scheduled (asyncio's call_soon). Callbacks run in FIFO order. It
// panics with an error wrapping ErrLoopClosed on a closed loop, and on a
// nil fn.
func (l *Loop) CallSoon(fn func()) *Handle {
	l.checkClosed()
	if fn == nil {
		panic(runtimeErrorf("CallSoon: nil callback"))
	}
	l.checkThread()
	h := l.newHandle(fn)
	l.ready.push(readyEntry{handle: h})
	return h
}

// handleSlabSize is how many Handles newHandle allocates at once. A slab
// stays reachable while any of its handles is, so a retained handle keeps
// handleSlabSize*24 bytes alive; in exchange CallSoon costs one heap
// allocation per handleSlabSize calls instead of one per call.
const handleSlabSize = 128

// newHandle returns a fresh Handle for fn, carved from a slab. Handles are
// never reused: each one is handed out once, so a Handle kept by a caller
// behaves exactly as if it had been allocated on its own.
func (l *Loop) newHandle(fn func()) *Handle {
	if len(l.handleSlab) == 0 {
		l.handleSlab = make([]Handle, handleSlabSize)
	}
	h := &l.handleSlab[0]
	l.handleSlab = l.handleSlab[1:]
	h.fn, h.loop = fn, l
	return h
}

// callSoonFunc schedules an internal callback without allocating a Handle.
func (l *Loop) callSoonFunc(fn func()) {
	l.checkClosed()
	l.checkThread()
	l.ready.push(readyEntry{fn: fn})
}

// scheduleStep queues a step of t (a first step, or the resumption after a
// bare yield).
func (l *Loop) scheduleStep(t *T) {
	l.checkClosed()
	l.checkThread()
	l.ready.push(readyEntry{task: t})
}

// CallLater schedules fn to run d from now (asyncio's call_later). A
// non-positive d runs it in the next iteration; a deadline past Never
// (CallLater(Never, fn)) saturates at Never instead of wrapping around.
func (l *Loop) CallLater(d time.Duration, fn func()) *TimerHandle {
	when := l.Time() + d
	if d > 0 && when < 0 {
		when = Never
	}
	return l.CallAt(when, fn)
}

// CallAt schedules fn to run at the absolute loop time when (asyncio's
// call_at). A deadline in the past fires in the next iteration.
func (l *Loop) CallAt(when time.Duration, fn func()) *TimerHandle {
	l.checkClosed()
	if fn == nil {
		panic(runtimeErrorf("CallAt: nil callback"))
	}
	l.checkThread()
	l.timerSeq++
	t := &TimerHandle{Handle: Handle{fn: fn, loop: l, inHeap: true}, when: when, seq: l.timerSeq}
	l.timers.push(t)
	return t
}

// Stop asks the loop to stop after the current iteration (asyncio's
// stop). Called before RunForever, it makes RunForever run exactly one
// iteration.
func (l *Loop) Stop() { l.stopping = true }

// RunForever runs the loop until Stop is called (asyncio's run_forever).
// It returns an error if the loop is closed or already running, and
// ErrDeadlock on virtual time when the loop would block forever.
func (l *Loop) RunForever() error {
	if l.closed {
		return errLoopClosed()
	}
	if l.running {
		return runtimeErrorf("This event loop is already running")
	}
	l.running = true
	l.noteHolder()
	start := l.Time()
	// Deferred: a runtime.Goexit in a task ends this goroutine too.
	defer func() {
		l.running = false
		l.stopping = false
		l.metrics.runTime += l.Time() - start
	}()
	// At least one iteration, even when Stop was called before.
	if l.snapshotLeft == 0 {
		l.startIteration()
	}
	l.runReady(nil)
	if l.deadlocked {
		l.deadlocked = false
		// The error carries a dump of what every task waits on.
		return &DeadlockError{Snapshot: l.snapshot(SnapshotOptions{MaxTasks: deadlockDumpTasks})}
	}
	return nil
}

// RunUntilComplete runs the loop until aw is done (asyncio's
// run_until_complete) and returns aw's error: nil on success, the error it
// failed with, or a *CancelledError. Read a result with aw's Result.
func (l *Loop) RunUntilComplete(aw Awaitable) error {
	if l.closed {
		return errLoopClosed()
	}
	if l.running {
		return runtimeErrorf("This event loop is already running")
	}
	fc := aw.core()
	if fc.loop != l {
		return runtimeErrorf("The future belongs to a different loop than the one specified as the loop argument")
	}
	id := fc.addDoneCallback(l.Stop)
	err := l.RunForever()
	fc.removeDoneCallback(id)
	if err != nil {
		return err
	}
	if !fc.done() {
		return runtimeErrorf("Event loop stopped before Future completed.")
	}
	return fc.resultErr()
}

// # The iteration
//
// One iteration is asyncio's _run_once, in two halves: startIteration (drop
// cancelled timers, poll for I/O with the right timeout, move due timers to
// the ready queue, take the snapshot) and runReady (run exactly the entries
// of the snapshot, in FIFO order). Entries queued while the snapshot runs
// wait for the next iteration.
//
// # Who runs it
//
// Two kinds of goroutine run the loop, one at a time. The driver is the
// goroutine in RunForever. A task's goroutine runs the loop too, between
// its own steps: when its step ends (an await), it carries on with the
// callbacks and iterations that come next, and when its own next step comes
// up it simply returns into the task: a task that only yields, or awaits
// what its own callbacks complete, never switches goroutines. When another
// task's step comes up, or the loop must stop, it hands control back to the
// driver, which resumes that task. Only the driver resumes tasks, so
// resumes never nest. The snapshot being run is loop state (snapshotLeft),
// so whichever goroutine holds the loop carries on exactly where the other
// left off.

// nextUp is what runReady stopped at.
type nextUp uint8

const (
	// upStop: the last iteration is over and the loop must stop (Stop was
	// called, or a loop on virtual time would block forever).
	upStop nextUp = iota
	// upOwnStep: the calling task's own next step is due; it goes on
	// without a goroutine switch.
	upOwnStep
	// upOtherStep: another task's step is due. Only the driver resumes
	// tasks, so the calling task gives control back to it.
	upOtherStep
)

// runReady runs the loop on the calling goroutine: the rest of the current
// snapshot, then iteration after iteration. Called by the driver (self ==
// nil), it resumes every task whose step comes up and returns upStop when
// the loop must stop. Called by task self as its step ends, it returns at
// the first task step it meets (upOwnStep if it is self's, upOtherStep,
// leaving the entry queued, if not) or upStop.
func (l *Loop) runReady(self *T) nextUp {
	for {
		if l.snapshotLeft == 0 {
			// asyncio's run_forever: "_run_once(); if stopping: break".
			if l.stopping || l.deadlocked {
				return upStop
			}
			l.startIteration()
			continue
		}
		e := l.ready.peek()
		if e.task == nil {
			l.runCallbacks()
			continue
		}
		task := e.task
		if self != nil && task != self {
			return upOtherStep
		}
		from := e.from
		l.ready.pop()
		l.snapshotLeft--
		l.metrics.steps++
		if !l.beginStep(task, from) {
			continue
		}
		if task == self {
			return upOwnStep
		}
		task.started = true
		task.resume() // the driver: run task's step on its goroutine
		l.noteHolder()
	}
}

// startIteration is the first half of asyncio's _run_once: drop cancelled
// timers, poll for I/O with the right timeout, move due timers to the ready
// queue, and take the snapshot of entries this iteration runs.
func (l *Loop) startIteration() {
	l.metrics.iterations++
	l.diagOn = l.diagFlags != 0 || trace.IsEnabled()
	// The len checks keep the calls off the path of a loop without timers
	// (a Sleep(t, 0) loop is this function and little else).
	if len(l.timers) > 0 {
		l.dropCancelledTimers()
	}
	l.drainThreadsafe()
	if l.metrics.beforePoll != nil {
		// Before the timeout is computed, as ae.c's beforesleep: what the
		// hook schedules makes this poll not block.
		l.runPollHook(l.metrics.beforePoll, "before-poll")
	}
	timeout := time.Duration(0)
	if l.ready.len() == 0 && !l.stopping {
		timeout = l.idleTimeout()
	}
	if timeout != 0 {
		l.pollBlocking(timeout) // timed: Stats().PollTime
	} else {
		l.poll(0)
	}
	if l.deadlocked {
		return
	}
	if l.metrics.afterPoll != nil {
		l.runPollHook(l.metrics.afterPoll, "after-poll")
	}
	l.drainThreadsafe()
	if len(l.timers) > 0 {
		l.queueDueTimers()
	} else if l.metrics.iterations&coarseClockEvery == 0 {
		l.metrics.coarseNow = l.Time()
	}
	l.snapshotLeft = l.ready.len()
	l.metrics.entries += uint64(l.snapshotLeft)
}

// dropCancelledTimers removes cancelled timers lazily (LOOP-4): the whole
// heap is rebuilt when more than half of more than 100 timers are
// cancelled, otherwise only cancelled timers at its head are popped.
func (l *Loop) dropCancelledTimers() {
	if n := len(l.timers); n > minScheduledTimerHandles &&
		float64(l.cancelledTimers)/float64(n) > minCancelledTimerHandlesFrac {
		l.timers.compact()
		l.cancelledTimers = 0
		return
	}
	for len(l.timers) > 0 && l.timers.first().cancelled {
		l.timers.pop()
		l.cancelledTimers--
	}
}

// idleTimeout is how long an iteration with nothing ready may wait for
// I/O (a pending stop or a ready entry makes it 0): until the earliest
// timer, capped at 24 hours (LOOP-3), else forever (-1).
func (l *Loop) idleTimeout() time.Duration {
	if len(l.timers) > 0 {
		return min(max(l.timers[0].when-l.Time(), 0), maxPollTimeout)
	}
	return -1
}

// queueDueTimers moves the timers whose deadline has passed to the ready
// queue, in deadline order. Clock resolution is 1ns, so asyncio's "when <
// now + resolution" is "when <= now".
func (l *Loop) queueDueTimers() {
	end := l.Time()
	l.metrics.coarseNow = end
	for len(l.timers) > 0 {
		t := l.timers.first()
		if t.cancelled {
			l.timers.pop()
			l.cancelledTimers--
			continue
		}
		if t.when > end {
			break
		}
		l.timers.pop()
		l.ready.push(readyEntry{handle: &t.Handle})
	}
}

// runCallbacks runs the callbacks at the head of the ready queue, up to the
// next task step or the end of the snapshot, under one deferred recover
// instead of one per callback. A panic is reported to the exception handler
// (LOOP-12) and ends the batch; runReady goes on with the next entry. In
// debug mode each callback is timed (asyncio's slow_callback_duration).
func (l *Loop) runCallbacks() {
	var fn func()
	var h *Handle
	var start time.Time
	defer func() {
		if r := recover(); r != nil {
			l.reportCallbackPanic(r, fn, h)
			l.reportIfSlow(fn, start)
		}
	}()
	for l.snapshotLeft > 0 && !l.ready.nextIsTask() {
		e := l.ready.pop()
		l.snapshotLeft--
		h, fn = e.handle, e.fn
		if h != nil {
			if fn = h.take(); fn == nil {
				continue // cancelled
			}
		}
		if l.diagFlags == 0 { // timed with a diagnostic on (not for tracing alone)
			fn()
			continue
		}
		start = time.Now()
		fn()
		l.reportIfSlow(fn, start)
		start = time.Time{}
	}
}

// reportIfSlow warns about a callback that ran for slowCallback or longer
// (debug mode; start is zero when the callback was not timed).
func (l *Loop) reportIfSlow(fn func(), start time.Time) {
	if start.IsZero() {
		return
	}
	dt := time.Since(start)
	l.metrics.callbackTime += dt
	if l.debug && dt >= l.slowCallback {
		slog.Warn(fmt.Sprintf("Executing %s took %.3f seconds", funcName(fn), dt.Seconds()))
	}
}

// poll waits for I/O or for the timeout. Without registered file
// descriptors it makes no system call: it waits on a timer or the wakeup
// channel directly (or, on virtual time, moves the clock).
func (l *Loop) poll(timeout time.Duration) {
	haveFDs := len(l.fds) > 0
	if haveFDs {
		if l.virtual && timeout != 0 {
			if l.pollSelector(0) > 0 {
				return
			}
			if timeout > 0 {
				l.virtualNow += timeout
				return
			}
		}
		l.pollSelector(timeout)
		return
	}
	if timeout == 0 {
		return
	}
	if l.virtual {
		// Work in flight on other goroutines takes no virtual time: wait
		// for it (it comes back through CallSoonThreadsafe) before
		// jumping to the next timer.
		if timeout > 0 && l.external.Load() == 0 {
			l.virtualNow += timeout
			return
		}
		if l.external.Load() == 0 {
			l.threadsafeMu.Lock()
			idle := len(l.threadsafePending) == 0
			l.threadsafeMu.Unlock()
			if idle {
				l.deadlocked = true
				return
			}
		}
	}
	// Block on the wakeup channel, with a timer when there is a deadline.
	l.threadsafeMu.Lock()
	if len(l.threadsafePending) > 0 {
		l.threadsafeMu.Unlock()
		return
	}
	l.sleepMode = sleepOnChannel
	l.threadsafeMu.Unlock()
	if timeout > 0 && !l.virtual {
		if l.sleepTimer == nil {
			l.sleepTimer = time.NewTimer(timeout)
		} else {
			l.sleepTimer.Reset(timeout)
		}
		select {
		case <-l.wakeCh:
			l.sleepTimer.Stop()
		case <-l.sleepTimer.C:
		}
	} else {
		<-l.wakeCh
	}
	l.threadsafeMu.Lock()
	l.sleepMode = sleepAwake
	l.threadsafeMu.Unlock()
}

// pollSelector waits on the selector and queues the handles of ready file
// descriptors: reader first, then writer (LOOP-1.3). It returns the number
// of events.
func (l *Loop) pollSelector(timeout time.Duration) int {
	if timeout != 0 {
		l.threadsafeMu.Lock()
		if len(l.threadsafePending) > 0 {
			timeout = 0
		} else {
			l.sleepMode = sleepOnSelector
		}
		l.threadsafeMu.Unlock()
	}
	events, err := l.sel.poll(timeout, l.ioEvents[:0])
	if timeout != 0 {
		l.threadsafeMu.Lock()
		l.sleepMode = sleepAwake
		l.threadsafeMu.Unlock()
	}
	l.ioEvents = events
	if err != nil {
		l.CallExceptionHandler(ExceptionContext{Message: "selector poll failed", Err: err})
		return 0
	}
	for _, ev := range events {
		h := l.fds[ev.fd]
		if h == nil {
			continue
		}
		if ev.readable && h.reader != nil {
			if h.reader.cancelled {
				l.RemoveReader(ev.fd)
			} else {
				l.ready.push(readyEntry{handle: h.reader})
			}
		}
		if h = l.fds[ev.fd]; h != nil && ev.writable && h.writer != nil {
			if h.writer.cancelled {
				l.RemoveWriter(ev.fd)
			} else {
				l.ready.push(readyEntry{handle: h.writer})
			}
		}
	}
	return len(events)
}

// Close closes the loop (asyncio's close): the ready queue and the timers
// are discarded without running, the selector is closed, and every task
// still pending is reported to the exception handler ("Task was destroyed
// but it is pending!") and its goroutine is unwound (its deferred calls
// run; any await in them returns a CancelledError at once). Close is
// idempotent and returns an error for a running loop.
func (l *Loop) Close() error {
	if l.running {
		return runtimeErrorf("Cannot close a running event loop")
	}
	if l.closed {
		return nil
	}
	for _, t := range append([]*T(nil), l.tasks...) {
		l.CallExceptionHandler(ExceptionContext{Message: "Task was destroyed but it is pending!", Task: t})
		if t.started && !t.fut.done() {
			t.kill()
		}
	}
	l.threadsafeMu.Lock()
	l.closed = true
	l.threadsafePending = nil
	l.threadsafeFlag.Store(false)
	l.threadsafeMu.Unlock()
	l.ready.clear()
	l.metrics.entries -= uint64(l.snapshotLeft) // discarded, never run
	l.snapshotLeft = 0
	for _, s := range l.timers {
		s.t.inHeap = false
	}
	l.timers = nil
	l.cancelledTimers = 0
	l.tasks = nil
	l.cancelLog, l.cancelLogNext = nil, 0 // it references tasks
	for _, hook := range l.closeHooks {
		hook()
	}
	l.closeHooks = nil
	if l.sel != nil {
		err := l.sel.close()
		l.sel, l.fds = nil, nil
		return err
	}
	return nil
}

// onClose registers fn to run when the loop is closed (executor shutdown).
func (l *Loop) onClose(fn func()) { l.closeHooks = append(l.closeHooks, fn) }

// goroutineID returns the calling goroutine's id (debug mode only: it
// parses runtime.Stack).
func goroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// reportCallbackPanic sends a panic that escaped a callback to the
// exception handler (LOOP-12).
func (l *Loop) reportCallbackPanic(r any, fn func(), h *Handle) {
	l.CallExceptionHandler(ExceptionContext{
		Message: "Exception in callback " + funcName(fn),
		Err:     newPanicError(r),
		Handle:  h,
	})
}
