package asyncio

import (
	"iter"
	"math"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
	"github.com/go-asyncio/asyncio/internal/hooks"
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
// A Loop is not safe for concurrent use: while it runs, only the goroutine
// running it (the one in RunForever, or the task goroutine holding the
// loop) may call its methods; another goroutine uses CallSoonThreadsafe or
// RunCoroutineThreadsafe. Scheduling and awaiting from another goroutine
// panics before anything changes (see OnLoopGoroutine and the README's
// "What is checked, in which mode"). Make it with NewLoop: the zero Loop
// is not one, and scheduling on it or running it is a *ValueError.
type Loop struct {
	ready        readyQueue
	snapshotLeft int // entries of the current iteration's snapshot not yet run

	timers          timerHeap
	cancelledTimers int
	timerSeq        uint64

	virtual    bool
	eagerTasks bool // WithEagerTasks
	virtualNow time.Duration
	epoch      time.Time

	running  atomic.Bool // read by other goroutines (IsRunning)
	stopping bool
	closed   bool
	closing  bool // Close is unwinding the pending tasks
	open     bool // made by NewLoop and not closed (checkClosed)
	// unwindNext is the task Close is unwinding whose await returned the
	// outcome of an outside operation that had happened instead
	// (T.outcomeAtKill): its next await unwinds it (T.awaitKilled).
	unwindNext *T
	deadlocked bool

	current   *T   // the task whose step is running, nil in callbacks
	tasks     []*T // not-done tasks, for AllTasks and Close
	callbackN CallbackID

	// I/O: the selector is created the first time a file descriptor is
	// registered, so a loop without I/O never makes a system call.
	sel      selector
	fds      map[int]*fdHandlers
	ioEvents []ioEvent
	// closedWorldFD, set by a simulated network (hooks.SetClosedWorld),
	// reports whether an fd is one of its descriptors: ready only through
	// this loop's own callbacks and timers (see waitsForNothing).
	closedWorldFD func(fd int) bool
	// prePolls run at the start of each poll step (hooks.AddPrePoll: a
	// simulated network relaying what was written since the last poll).
	prePolls []*prePoll

	// Cross-goroutine scheduling (CallSoonThreadsafe).
	threadsafeMu      sync.Mutex
	threadsafePending []*Handle
	threadsafeFlag    atomic.Bool   // threadsafePending is non-empty
	sleepMode         int           // guarded by threadsafeMu: how to wake a blocked loop
	wakeCh            chan struct{} // wakes a loop blocked without a selector
	sleepTimer        *time.Timer
	external          atomic.Int64 // work in flight on other goroutines (executors)
	// RunCoroutineThreadsafe futures not yet done, completed by Close
	// (guarded by threadsafeMu).
	threadsafeFutures map[threadsafeFuture]struct{}
	snapReq           snapshotRequests // SnapshotThreadsafe's request in flight (diag_snapshotreq.go)

	exceptionHandler atomic.Pointer[func(*Loop, ExceptionContext)]
	handlerMu        sync.Mutex    // one handler call at a time (the watchdog calls it too)
	handlerOwner     atomic.Uint64 // gid token of the goroutine holding handlerMu (0: none)
	// exceptionTap sees every report before the handler (hooks.SetExceptionTap:
	// the cancellation tester's); called under handlerMu.
	exceptionTap func(ExceptionContext)
	debug        bool
	checkAll     bool // checkThread checks: checkEveryMode || debug
	slowCallback time.Duration

	// holder is the gid.Token of the goroutine running the loop right now
	// (the driver in RunForever, or the task goroutine holding it), 0
	// while the loop is not running. It is atomic because other goroutines
	// read it: checkThread, OnLoopGoroutine and the watchdog.
	holder      atomic.Uint64
	driverToken uint64 // gid.Token of the goroutine in RunForever

	wd    watchdog   // see diag_watchdog.go
	stall stallWatch // virtual time waiting for outside work (stall.go)

	// coarseNow is the loop's clock as last read by the loop itself (a
	// wait, a timer check, or every coarseClockEvery+1 iterations): what
	// a suspending task records as the start of its wait, for free.
	coarseNow time.Duration
	// beforePoll and afterPoll are the poll hooks (Redis ae.c's
	// beforesleep/aftersleep): SetBeforePoll, SetAfterPoll.
	beforePoll, afterPoll func()

	closeHooks     []*closeHook // OnClose, in registration order
	closeHooksLive int
	executor       *executor     // the default executor, created on first use
	outside        *outsideCalls // Go calls, executor jobs, channel ops in flight (bridge.go)
	signals        *signalState  // signal handlers (signal.go), nil until the first AddSignalHandler
	// sigintHandled: SIGINT has a handler on this loop, so the Runner's
	// Ctrl-C watch, on its own goroutine, leaves SIGINT to it (runner_signal.go).
	sigintHandled atomic.Bool

	// unretrieved lists the failed futures and tasks whose error nobody
	// has read yet; Close reports them (future.go, FUT-10).
	unretrieved    []*unretrieved
	unretrievedSeq uint64

	// obs is what observes the loop's tasks (diag_observe.go), nil when
	// nothing does; diagSet the settings it is derived from.
	obs     observer
	diagSet diagSettings
	metrics loopMetrics // counters (diag_stats.go)
	// cancelLog is a ring of the last cancel requests, who cancelled whom
	// (diag_cancel.go); allocated at the first one.
	cancelLog     []cancelRecord
	cancelLogNext uint64

	handleSlab *[handleSlabSize]Handle // Handles for CallSoon; see newHandle
	handleLeft int                     // how many of handleSlab are unused
	workers    []pooledWorker          // parked task goroutines (switch.go)
	workerBody iter.Seq[struct{}]      // what every task goroutine runs (switch.go)
	hosting    *T                      // the task a starting or pooled goroutine is to run (switch.go)
	lockKey    uint64                  // the driver's thread lock, for task goroutines ("Locked threads", switch.go)
	lockProbed uint64                  // the driver goroutine lockKey was read from
	workerKeys []uint64                // every lockKey task goroutines were started under
	// resumers are the tasks whose goroutines resumed the task running
	// now, outermost first (runReady): it gives control back to the last
	// one, not to the driver. Empty when the driver resumed it.
	resumers []*T
	// eagerGoexit: a task's eager first step ended its goroutine with
	// runtime.Goexit, which iter.Pull passed on to the goroutine that
	// resumed it inside CreateTask (eagerStart): the task whose goroutine
	// that is did nothing wrong (see main). The next task goroutine that
	// ends abnormally consumes it; RunForever resets it when it returns.
	eagerGoexit bool
	// labelledEver: the loop has set a task goroutine's pprof labels
	// (labelObserver); its new task goroutines drop inherited labels.
	labelledEver bool

	grp loopGroupState // name, group serving, cross-loop calls (group.go, crossloop.go)

	// threadsafeSpare is the other buffer of threadsafePending (guarded by
	// threadsafeMu; moveThreadsafe). Last, with the other cold fields, so
	// that the hot ones keep their places.
	threadsafeSpare []*Handle
}

// maxNestedResumes bounds how deep tasks resume one another (runReady):
// a task that must give control back to one far up the chain switches
// once per level.
const maxNestedResumes = 4

// coarseClockEvery+1 is how many iterations may pass between two reads of
// the coarse clock when the loop neither waits nor has timers.
const coarseClockEvery = 127

const (
	sleepAwake = iota
	sleepOnChannel
	sleepOnSelector
)

type fdHandlers struct {
	reader, writer *Handle
}

// NewLoop returns a new, not yet running event loop
// (asyncio.new_event_loop). Debug mode is on if the environment variable
// GOASYNCIODEBUG is set to a non-empty string (see DebugEnv), or with
// WithDebug. A nil option panics with a *ValueError, before anything is
// made.
func NewLoop(opts ...LoopOption) *Loop {
	checkLoopOptions("NewLoop", opts)
	l := &Loop{
		epoch:        time.Now(),
		open:         true,
		wakeCh:       make(chan struct{}, 1),
		slowCallback: defaultSlowCallbackDuration,
		debug:        debugFromEnv(), // GOASYNCIODEBUG (debugenv.go)
	}
	for _, o := range opts {
		o(l)
	}
	l.settingsChanged()
	return l
}

// checkLoopOptions panics with a *ValueError naming op and the index of
// the first nil LoopOption, before op makes anything.
func checkLoopOptions(op string, opts []LoopOption) {
	for i, o := range opts {
		if o == nil {
			panic(valueErrorf("%s: nil LoopOption at index %d", op, i))
		}
	}
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

// checkSameBubble refuses to run l on a goroutine on the other side of a
// testing/synctest bubble from where l was created: the loop's clock is
// the time since its creation, and a bubble's clock is not the real one,
// so its timers would be due decades away (or long past). A goroutine's
// side never changes, so RunForever asks once per driver goroutine.
func (l *Loop) checkSameBubble() error {
	createdInside, inside := l.bubbleSides()
	if inside == createdInside {
		return nil
	}
	return runtimeErrorf("the loop was created %s a testing/synctest bubble and cannot run %s one "+
		"(its clock would jump between the bubble's time and the real one): create the loop where it runs",
		bubbleSide(createdInside), bubbleSide(inside))
}

// checkCloseSide refuses to close l on a goroutine on the other side of a
// testing/synctest bubble from where l was created, once l has run:
// closing resumes the loop's task goroutines (to unwind them, or to end
// the pooled ones), which belong to the side where the loop ran, and a
// bubble goroutine waiting while a goroutine outside the bubble runs is
// durably blocked to synctest (its "deadlock: all goroutines in bubble
// are blocked"). A loop that never ran has nothing of either side.
func (l *Loop) checkCloseSide(op string) error {
	createdInside, inside := l.bubbleSides()
	if inside == createdInside || !l.hasRun() {
		return nil
	}
	return closeSideError(op, createdInside, inside)
}

// hasRun reports whether l ever ran (RunForever recorded its driver) or
// keeps task goroutines.
func (l *Loop) hasRun() bool { return l.lockProbed != 0 || len(l.workers) > 0 }

func closeSideError(op string, createdInside, inside bool) error {
	return runtimeErrorf("%s: the loop was created %s a testing/synctest bubble and cannot be closed %s one "+
		"(its task goroutines belong to the side where it ran): close it where it was created",
		op, bubbleSide(createdInside), bubbleSide(inside))
}

// bubbleSides reports whether l was created inside a testing/synctest
// bubble and whether the caller runs inside one.
func (l *Loop) bubbleSides() (createdInside, inside bool) {
	return l.epoch == l.epoch.Round(0), inSynctestBubble() // as inSynctestBubble
}

func bubbleSide(in bool) string {
	if in {
		return "inside"
	}
	return "outside"
}

// IsRunning reports whether the loop is running (asyncio's is_running).
// Unlike the other methods, any goroutine may call it.
func (l *Loop) IsRunning() bool { return l.running.Load() }

// IsClosed reports whether Close was called (asyncio's is_closed).
func (l *Loop) IsClosed() bool { return l.closed }

// SetDebug turns debug mode on or off (asyncio's set_debug): slow
// callbacks and task steps are reported, and loop methods called from a
// goroutine that is not running the loop panic.
func (l *Loop) SetDebug(on bool) {
	l.checkThreadAlways("SetDebug")
	l.debug = on
	l.settingsChanged()
}

// Debug reports whether debug mode is on (asyncio's get_debug).
func (l *Loop) Debug() bool { return l.debug }

// SetSlowCallbackDuration sets the debug-mode threshold above which a
// callback or task step is reported as slow (default 100 ms): after it
// returns, with how long it took, and, while it is still running, by the
// watchdog with its stack (see SetBlockedThreshold).
func (l *Loop) SetSlowCallbackDuration(d time.Duration) {
	l.checkThreadAlways("SetSlowCallbackDuration")
	l.slowCallback = d
	l.settingsChanged()
}

// SlowCallbackDuration returns debug mode's slow-callback threshold
// (reading asyncio's loop.slow_callback_duration): 100 ms unless
// WithSlowCallbackDuration or SetSlowCallbackDuration changed it.
func (l *Loop) SlowCallbackDuration() time.Duration { return l.slowCallback }

// checkClosed panics for a closed loop, or one not made by NewLoop. One
// test on the hot path (CallSoon): open is set by NewLoop, cleared by
// Close.
func (l *Loop) checkClosed() {
	if !l.open {
		l.panicNotOpen()
	}
}

//go:noinline
func (l *Loop) panicNotOpen() {
	if l.closed {
		panic(errLoopClosed())
	}
	panic(errZeroLoop())
}

// errZeroLoop is the *ValueError for a Loop not made by NewLoop (the zero
// Loop, &Loop{}), which has no clock, wake-up channel or settings: what
// schedules on it panics with it, and RunForever returns it.
func errZeroLoop() *ValueError {
	return valueErrorf("zero Loop (make it with NewLoop, or use Run or a Runner)")
}

// isZero reports whether l was not made by NewLoop (the zero Loop), which
// has no wake-up channel; unlike open, it stays false after Close.
func (l *Loop) isZero() bool { return l.wakeCh == nil }

// takeLoop records that the calling goroutine now runs the loop. It is
// called wherever a goroutine takes the loop over: RunForever's start, the
// driver when it runs callbacks after a resume (retake), a task's first
// step (T.main) and a task going on after it was resumed (park).
func (l *Loop) takeLoop(token uint64) { l.holder.Store(token) }

// OnLoopGoroutine reports whether the caller is the goroutine running l:
// the goroutine in RunForever, or the task goroutine holding the loop
// (inside a task's function, or a callback the loop runs from there). It
// is false on every other goroutine, and whenever l is not running. Any
// goroutine may call it. Code that may be called from anywhere (a net.Conn
// adapter, a library callback) uses it to choose between calling the loop
// directly and going through CallSoonThreadsafe. It costs a few
// nanoseconds on amd64 and arm64, about a microsecond elsewhere
// (internal/gid).
func (l *Loop) OnLoopGoroutine() bool {
	h := l.holder.Load()
	return h != 0 && h == gid.Token()
}

// checkEveryMode says whether checkThread checks outside debug mode: on
// architectures where gid.Token is a few instructions (gid.Fast). It is a
// variable, not the constant, so that a test can exercise the other
// policy; reading it costs less than a nanosecond.
var checkEveryMode = gid.Fast

// checkThread panics, before the caller changes anything, when op is
// called from a goroutine that is not running the loop while the loop
// runs (asyncio's debug-mode _check_thread, DEBUG-3, made unconditional
// where telling goroutines apart is cheap). Where gid.Token is slow it
// checks in debug mode only (checkAll); checkThreadAlways is the guard
// that stays on everywhere, for the calls that are rare and would corrupt
// the loop. (No variant of it fits the inlining budget: the call to
// gid.Token alone costs most of it.)
func (l *Loop) checkThread(op string) {
	if l == nil {
		panicNilLoop(op)
	}
	if h := l.holder.Load(); h != 0 && l.checkAll && h != gid.Token() {
		panicNotOnLoop(op)
	}
}

// onLoop is checkThread's fast path, for the hottest callers (CallSoon,
// SetResult, Sleep, Future.Await): true when the caller holds the loop,
// which is the common case. It inlines, so that the check costs one call
// (gid.Token) where checkThread costs two; when it is false the caller
// calls checkThread, which decides (the loop may not be running, or
// checks may be off). Where gid.Token is slow it calls it only when
// checkThread would.
func (l *Loop) onLoop() bool {
	if !gid.Fast {
		return !l.checkAll || l.holder.Load() == 0 || gid.Token() == l.holder.Load()
	}
	return gid.Token() == l.holder.Load()
}

// checkThreadAlways is checkThread in every mode on every architecture.
func (l *Loop) checkThreadAlways(op string) {
	if h := l.holder.Load(); h != 0 && h != gid.Token() {
		panicNotOnLoop(op)
	}
}

// panicNilLoop is checkThread's panic for a nil loop: a nil *Loop, or a
// Future or Task used without its constructor (its zero value has no loop).
//
//go:noinline
func panicNilLoop(op string) {
	panic(valueErrorf("%s: no loop (a nil *Loop, or a Future or Task not made by NewFuture or CreateTask)", op))
}

// panicNotOnLoop is checkThread's panic.
//
//go:noinline
func panicNotOnLoop(op string) {
	panic(runtimeErrorf("%s called from a goroutine that is not running the loop "+
		"(only the goroutine in RunForever and the loop's running task may call it; "+
		"from another goroutine use CallSoonThreadsafe or RunCoroutineThreadsafe)", op))
}

// CallSoon schedules fn to run in a later iteration, after everything
// already scheduled (asyncio's call_soon). Callbacks run in FIFO order. It
// panics with an error wrapping ErrLoopClosed on a closed loop, with a
// *ValueError on a nil fn, and with a *RuntimeError when called from a
// goroutine that is not running the loop (use CallSoonThreadsafe there).
func (l *Loop) CallSoon(fn func()) *Handle {
	if !l.onLoop() {
		l.checkThread("CallSoon")
	}
	l.checkClosed()
	if fn == nil {
		panic(valueErrorf("CallSoon: nil callback"))
	}
	// Callbacks scheduled by CallSoonThreadsafe before this call run
	// before it, as in asyncio, where both append to the one ready queue.
	l.drainThreadsafe()
	h := l.newHandle(fn)
	l.ready.push(handleEntry(h))
	return h
}

// handleSlabSize is how many Handles newHandle allocates at once. A slab
// stays reachable while any of its handles is, so a retained handle keeps
// handleSlabSize*16 bytes alive; in exchange CallSoon costs one heap
// allocation per handleSlabSize calls instead of one per call.
const handleSlabSize = 128

// newHandle returns a fresh Handle for fn, carved from a slab. Handles are
// never reused: each one is handed out once, so a Handle kept by a caller
// behaves exactly as if it had been allocated on its own. The slab is
// used up by a counter, not by reslicing, and a Handle holds no loop
// (only a threadsafe or timer handle's Cancel needs it, and those are in
// a threadsafeHandle or TimerHandle): on this path every pointer stored
// costs a write barrier while the collector marks.
func (l *Loop) newHandle(fn func()) *Handle {
	if l.handleLeft == 0 {
		l.handleSlab, l.handleLeft = new([handleSlabSize]Handle), handleSlabSize
	}
	h := &l.handleSlab[handleSlabSize-l.handleLeft]
	l.handleLeft--
	h.fn = fn
	return h
}

// The internal scheduling paths (callSoonFunc, scheduleStep, queueCallback)
// do not check the goroutine again: every way in (CallSoon, CreateTask,
// an await, SetResult, SetException, Cancel, AddDoneCallback) has checked
// it before changing any state, and the rest runs on the loop itself.

// callSoonFunc schedules an internal callback without allocating a Handle.
func (l *Loop) callSoonFunc(fn func()) {
	l.checkClosed()
	l.drainThreadsafe() // earlier CallSoonThreadsafe callbacks first (LOOP-1)
	l.ready.push(funcEntry(fn))
}

// scheduleStep queues a step of t (a first step, or the resumption after a
// bare yield).
func (l *Loop) scheduleStep(t *T) {
	l.checkClosed()
	l.drainThreadsafe() // earlier CallSoonThreadsafe callbacks first (LOOP-1)
	l.ready.push(stepEntry(t, nil))
}

// CallLater schedules fn to run d from now (asyncio's call_later). A
// non-positive d runs it in the next iteration; a deadline past Never
// (CallLater(Never, fn)) saturates at Never instead of wrapping around.
// It panics as CallSoon does.
func (l *Loop) CallLater(d time.Duration, fn func()) *TimerHandle {
	l.checkThread("CallLater")
	return l.callLater(d, fn, "CallLater")
}

func (l *Loop) callLater(d time.Duration, fn func(), op string) *TimerHandle {
	now := l.Time()
	when := now + d
	if d > 0 && when < now { // overflow
		when = Never
	}
	return l.callAt(when, fn, op)
}

// CallAt schedules fn to run at the absolute loop time when (asyncio's
// call_at). A deadline in the past, however far (math.MinInt64), fires in
// the next iteration. It panics as CallSoon does.
func (l *Loop) CallAt(when time.Duration, fn func()) *TimerHandle {
	l.checkThread("CallAt")
	return l.callAt(when, fn, "CallAt")
}

func (l *Loop) callAt(when time.Duration, fn func(), op string) *TimerHandle {
	l.checkClosed()
	if fn == nil {
		panic(valueErrorf("%s: nil callback", op))
	}
	l.timerSeq++
	t := &TimerHandle{Handle: Handle{fn: fn, inHeap: true}, loop: l, when: when, seq: l.timerSeq}
	l.timers.push(t)
	return t
}

// Stop asks the loop to stop after the current iteration (asyncio's
// stop). Called before RunForever, it makes RunForever run exactly one
// iteration. Another goroutine stops a running loop with
// l.CallSoonThreadsafe(l.Stop); calling Stop itself from there panics (it
// would not wake a loop that is waiting).
func (l *Loop) Stop() {
	l.checkThreadAlways("Stop")
	l.stopping = true
}

// RunForever runs the loop until Stop is called (asyncio's run_forever).
// It returns an error if the loop is closed or already running, and
// ErrDeadlock on virtual time when the loop would block forever.
func (l *Loop) RunForever() error {
	if l.isZero() {
		return errZeroLoop()
	}
	if l.running.Load() { // atomic: any goroutine may try
		return runtimeErrorf("This event loop is already running")
	}
	if l.closed {
		return errLoopClosed()
	}
	if callerRunsALoop() { // a task or callback of another loop (LOOP-10)
		return runtimeErrorf("Cannot run the event loop while another loop is running")
	}
	// Go resumes a task's goroutine only in the thread-lock state it was
	// started in ("Locked threads" in switch.go).
	// Asking whether a goroutine is locked costs ~3 µs (gid.Locked), so it
	// is asked once per driver goroutine, not at every RunUntilComplete.
	token, key := gid.Token(), l.lockKey
	probed := false
	if token != l.lockProbed {
		if err := l.checkSameBubble(); err != nil {
			return err
		}
		key, probed = lockKeyOfCaller(), true
	}
	if l.mixedLockKeys(key) {
		if t, tkey := l.unresumable(key); t != nil {
			// Nothing recorded: lockKey stays the key of lockProbed's
			// goroutine, which this one is not.
			return runtimeErrorf("RunForever: task %s was started while the loop ran on a goroutine %s, and Go can resume it "+
				"only from such a goroutine (runtime.LockOSThread): run the loop from the goroutine that started it",
				quoteText(t.Name()), lockStateText(tkey))
		}
	}
	if probed {
		l.lockProbed = token
	}
	l.lockKey = key
	l.running.Store(true)
	registerRunning(l) // runningloops.go
	l.driverToken = token
	l.takeLoop(l.driverToken)
	l.armWatchdog()
	start := l.Time()
	// Deferred: a runtime.Goexit in a task ends this goroutine too.
	defer func() {
		clear(l.resumers) // a Goexit may have ended nested resumes
		l.resumers = l.resumers[:0]
		l.eagerGoexit = false
		if key != 0 {
			l.releaseLockedWorkers(key) // only this goroutine can
		}
		l.disarmWatchdog()
		unregisterRunning(l)
		l.running.Store(false)
		l.stopping = false
		l.takeLoop(0)
		l.metrics.runTime += l.Time() - start
	}()
	driveLoop(l.driverToken, l)
	if l.deadlocked {
		l.deadlocked = false
		// The error carries a dump of what every task waits on.
		return &DeadlockError{Snapshot: l.snapshot(SnapshotOptions{MaxTasks: deadlockDumpTasks})}
	}
	return nil
}

// lockStateText describes the driver of lock key key, for errors.
func lockStateText(key uint64) string {
	if key == 0 {
		return "not locked to its OS thread"
	}
	return "locked to its OS thread"
}

// driveLoop is RunForever's part as the driver. Like runTaskFunc it is a
// frame of its own whose first argument, the goroutine's token, the
// watchdog looks for in a goroutine dump.
//
//go:noinline
func driveLoop(token uint64, l *Loop) {
	// At least one iteration, even when Stop was called before.
	if l.snapshotLeft == 0 {
		l.startIteration()
	}
	l.runReady(nil)
	if token == 0 { // keeps token live, hence printed, during the calls
		panic("asyncio: zero goroutine token")
	}
}

// RunUntilComplete runs the loop until aw is done (asyncio's
// run_until_complete) and returns aw's error: nil on success, the error it
// failed with, or a *CancelledError. Read a result with aw's Result. An
// aw of another loop is a *ValueError, as in asyncio (ensure_future).
func (l *Loop) RunUntilComplete(aw Awaitable) error {
	if l.isZero() {
		return errZeroLoop()
	}
	if l.running.Load() {
		return runtimeErrorf("This event loop is already running")
	}
	if l.closed {
		return errLoopClosed()
	}
	fc := coreOf(aw, "RunUntilComplete")
	if fc.loop != l {
		return &ValueError{Msg: errOtherLoopFuture}
	}
	// The stop is this run's only: a run unwound by a runtime.Goexit in a
	// task (t.FailNow) leaves it queued, and it must not stop the next run.
	over := false
	id := fc.addDoneCallback(func() {
		if !over {
			l.Stop()
		}
	})
	defer func() { over = true }()
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
// task's step comes up, the task resumes that task itself: one switch
// instead of two (back to the driver, then to the other task). The other
// task gives control back to it when its own step ends (Loop.resumers),
// and a task whose step comes up while it waits inside such a resume gets
// control back the same way, up the chain; so two tasks handing over to
// each other switch once per handoff. Resumes nest at most
// maxNestedResumes deep; past that, and when the loop must stop, control
// goes back up to the driver. (An eager task's first step, inside
// CreateTask, nests too: see eagerStart in step.go.) The snapshot being
// run is loop state (snapshotLeft), so whichever goroutine holds the loop
// carries on exactly where the other left off.

// nextUp is what runReady stopped at.
type nextUp uint8

const (
	// upStop: the last iteration is over and the loop must stop (Stop was
	// called, or a loop on virtual time would block forever).
	upStop nextUp = iota
	// upOwnStep: the calling task's own next step is due; it goes on
	// without a goroutine switch.
	upOwnStep
	// upOtherStep: another task's step is due that the calling task must
	// not resume (it waits up the chain of resumes, or the chain is as
	// deep as it may be): it gives control back to whoever resumed it.
	upOtherStep
)

// runReady runs the loop on the calling goroutine: the rest of the current
// snapshot, then iteration after iteration. Called by the driver (self ==
// nil), it resumes every task whose step comes up and returns upStop when
// the loop must stop. Called by task self as its step ends, it returns at
// self's own next step (upOwnStep) or upStop; another task's step it runs
// by resuming that task (nested), unless upOtherStep says control must go
// back up (the entry stays queued).
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
		if !e.isStep() {
			if self == nil {
				l.retake()
			}
			l.runCallbacks()
			continue
		}
		task := e.task()
		nest := false
		if self != nil && task != self {
			// task resuming another (an ancestor of self in the chain of
			// resumes) is waiting inside its resume: control goes back up
			// to it, as it does past the deepest nesting.
			if len(l.resumers) == maxNestedResumes || l.isResumer(task) {
				return upOtherStep // back to the task that resumed self
			}
			nest = true
		}
		from := e.from()
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
		if nest {
			// self resumes task itself: one switch instead of two (back to
			// whoever resumed self, then to task). task gives control back
			// to self when its step ends.
			l.resumers = append(l.resumers, self)
			task.resume()
			l.resumers[len(l.resumers)-1] = nil // no stale reference to self's task
			l.resumers = l.resumers[:len(l.resumers)-1]
			l.takeLoop(gid.Token())
			continue
		}
		task.resume() // the driver: run task's step on its goroutine
		if task.fut.done() {
			// Its goroutine has exited; a new goroutine may get its token.
			l.takeLoop(l.driverToken)
		}
	}
}

// isResumer reports whether t waits inside a resume of another task (it
// is in the chain of resumes, at most maxNestedResumes long).
func (l *Loop) isResumer(t *T) bool {
	for _, r := range l.resumers {
		if r == t {
			return true
		}
	}
	return false
}

// retake makes the driver the holder again before it runs user code.
// After a resume the driver leaves the holder as it is (one atomic store
// less per task switch) when the task only suspended: that token belongs
// to a goroutine parked in its switch, which can call nothing, so the
// checks stay sound while the driver runs the loop's own code. Before
// callbacks (or an exception handler) run on the driver, it must be the
// driver's.
func (l *Loop) retake() {
	if l.holder.Load() != l.driverToken {
		l.takeLoop(l.driverToken)
	}
}

// startIteration is the first half of asyncio's _run_once: drop cancelled
// timers, poll for I/O with the right timeout, move due timers to the ready
// queue, and take the snapshot of entries this iteration runs.
func (l *Loop) startIteration() {
	l.metrics.iterations++
	if trace.IsEnabled() != l.diagSet.tracing {
		l.settingsChanged() // tracing started or stopped: the observers follow
	}
	// The len checks keep the calls off the path of a loop without timers
	// (a Sleep(t, 0) loop is this function and little else).
	if len(l.timers) > 0 {
		l.dropCancelledTimers()
	}
	l.drainThreadsafe()
	for _, h := range l.prePolls {
		h.fn()
	}
	if l.beforePoll != nil {
		// Before the timeout is computed, as ae.c's beforesleep: what the
		// hook schedules makes this poll not block.
		l.runPollHook(l.beforePoll, "before-poll")
	}
	timeout := time.Duration(0)
	if l.ready.len() == 0 && !l.stopping {
		timeout = l.idleTimeout()
	}
	if timeout != 0 {
		l.pollBlocking(timeout) // timed: Stats().PollTime
	} else if len(l.fds) > 0 { // poll(0) without descriptors does nothing
		l.poll(0)
	}
	if l.deadlocked {
		return
	}
	if l.afterPoll != nil {
		l.runPollHook(l.afterPoll, "after-poll")
	}
	l.drainThreadsafe()
	if len(l.timers) > 0 {
		l.queueDueTimers()
	} else if l.metrics.iterations&coarseClockEvery == 0 {
		l.coarseNow = l.Time()
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
		// Compare before subtracting: when-now overflows for a deadline
		// far in the past (CallAt(math.MinInt64, fn)) and would wrap to a
		// day-long wait.
		when, now := l.timers[0].when, l.Time()
		if when <= now {
			return 0
		}
		return min(when-now, maxPollTimeout)
	}
	return -1
}

// queueDueTimers moves the timers whose deadline has passed to the ready
// queue, in deadline order. Clock resolution is 1ns, so asyncio's "when <
// now + resolution" is "when <= now".
func (l *Loop) queueDueTimers() {
	end := l.Time()
	l.coarseNow = end
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
		l.ready.push(handleEntry(&t.Handle))
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
	defer func() {
		if r := recover(); r != nil {
			l.reportCallbackPanic(r, fn, h)
			if l.obs != nil {
				l.obs.callbackEnded(fn)
			}
		}
	}()
	for l.snapshotLeft > 0 && !l.ready.nextIsTask() {
		e := l.ready.pop()
		l.snapshotLeft--
		if h = e.handle(); h != nil {
			if fn = h.take(); fn == nil {
				continue // cancelled
			}
		} else {
			fn = e.fn()
		}
		l.progress()
		if l.obs == nil {
			fn()
			continue
		}
		l.obs.callbackBegan()
		fn()
		l.obs.callbackEnded(fn)
	}
}

// poll waits for I/O or for the timeout. Without registered file
// descriptors it makes no system call: it waits on a timer or the wakeup
// channel directly (or, on virtual time, moves the clock).
func (l *Loop) poll(timeout time.Duration) {
	if l.virtual && timeout != 0 {
		l.pollVirtual(timeout)
		return
	}
	if len(l.fds) > 0 {
		l.pollSelector(timeout)
		return
	}
	if timeout != 0 {
		l.waitWakeup(timeout)
	}
}

// pollVirtual is poll on virtual time for an iteration with nothing ready
// (timeout != 0). The clock moves, or a deadlock is declared, only once
// nothing can run now: first the descriptors are polled without waiting
// and the CallSoonThreadsafe callbacks that came since the iteration
// drained its queue are moved to the ready queue. Anything ready then is
// run at the current time, as a real selector returns at once for it;
// only with nothing ready does the loop jump to the next timer (no outside
// work in flight), report ErrDeadlock (nothing can ever come), or wait in
// real time for outside work, which takes no virtual time.
func (l *Loop) pollVirtual(timeout time.Duration) {
	if len(l.fds) > 0 {
		l.pollSelector(0) // also drains the threadsafe queue
	} else {
		l.drainThreadsafe()
	}
	switch {
	case l.ready.len() > 0:
		return
	case timeout > 0 && l.external.Load() == 0:
		l.virtualNow += timeout
		return
	case timeout < 0 && l.waitsForNothing():
		l.deadlocked = true
		return
	}
	// Outside work in flight: wait for it (CallSoonThreadsafe wakes the
	// selector or the channel) or for I/O, and report it after a grace
	// period (stall.go).
	start := time.Now()
	if len(l.fds) > 0 {
		if l.pollSelector(l.stallWait()) == 0 {
			l.noteStall(start)
		}
		return
	}
	l.waitWakeup(l.stallWait())
	l.noteStall(start)
}

// waitWakeup blocks on the wakeup channel until CallSoonThreadsafe (or a
// change of the outside work) wakes the loop, or timeout passes (< 0:
// no limit). It returns at once if a callback is queued already.
func (l *Loop) waitWakeup(timeout time.Duration) {
	l.threadsafeMu.Lock()
	if len(l.threadsafePending) > 0 {
		l.threadsafeMu.Unlock()
		return
	}
	l.sleepMode = sleepOnChannel
	l.threadsafeMu.Unlock()
	l.wd.idle.Store(true)
	if timeout > 0 {
		if l.sleepTimer == nil {
			l.sleepTimer = time.NewTimer(timeout)
		} else {
			l.sleepTimer.Reset(timeout)
		}
		select {
		case <-l.wakeCh:
			l.sleepTimer.Stop()
		case <-l.sleepTimer.C:
			// Nobody woke the loop: it says itself that it is awake.
			l.threadsafeMu.Lock()
			l.sleepMode = sleepAwake
			l.threadsafeMu.Unlock()
		}
	} else {
		<-l.wakeCh
	}
	// Woken through wakeCh, the loop is marked awake already: wakeLocked
	// did it before its send (one lock less per wait, on a cache line the
	// waker just wrote). A wake-up left in wakeCh by a waker that raced a
	// timeout only makes a later wait return early, which a loop takes as
	// any spurious wake-up (it looks at its queues again).
	l.wakeWatchdog()
}

// waitsForNothing reports whether a loop on virtual time, with nothing
// ready and no timer, can never be woken: no outside work in flight or
// queued, no descriptor that something outside the loop could make ready
// (only a simulated network's, whose poll found nothing), and no signal
// handler (a signal from another process, or from a goroutine, runs it).
// It would then wait for ever: ErrDeadlock.
func (l *Loop) waitsForNothing() bool {
	if l.external.Load() != 0 || l.grp.serving || l.hasSignalHandlers() {
		return false
	}
	if len(l.fds) > 0 {
		if l.closedWorldFD == nil {
			return false
		}
		for fd := range l.fds {
			if !l.closedWorldFD(fd) {
				return false
			}
		}
	}
	l.threadsafeMu.Lock()
	idle := len(l.threadsafePending) == 0
	l.threadsafeMu.Unlock()
	return idle
}

func init() {
	hooks.RegisterClosedWorld(func(l *Loop, isClosedWorld func(fd int) bool) { l.closedWorldFD = isClosedWorld })
	hooks.RegisterIsVirtual(func(l *Loop) bool { return l.virtual })
	hooks.RegisterPrePoll(func(l *Loop, fn func()) func() {
		h := &prePoll{fn}
		l.prePolls = append(l.prePolls, h)
		return func() {
			if i := slices.Index(l.prePolls, h); i >= 0 {
				l.prePolls = slices.Delete(l.prePolls, i, i+1)
			}
		}
	})
}

// prePoll is one hooks.AddPrePoll registration.
type prePoll struct{ fn func() }

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
	if timeout != 0 {
		l.wd.idle.Store(true)
	}
	events, err := l.sel.poll(timeout, l.ioEvents[:0])
	if timeout != 0 {
		l.wakeWatchdog()
		l.threadsafeMu.Lock()
		l.sleepMode = sleepAwake
		l.threadsafeMu.Unlock()
	}
	l.ioEvents = events
	// A CallSoonThreadsafe that woke the poll (or came during it) was
	// made before the I/O is handled: asyncio has it in the ready queue
	// already, ahead of the I/O callbacks (LOOP-1).
	l.drainThreadsafe()
	if err != nil {
		l.takeLoop(gid.Token()) // see retake: user code runs next
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
				l.ready.push(handleEntry(h.reader))
			}
		}
		if h = l.fds[ev.fd]; h != nil && ev.writable && h.writer != nil {
			if h.writer.cancelled {
				l.RemoveWriter(ev.fd)
			} else {
				l.ready.push(handleEntry(h.writer))
			}
		}
	}
	return len(events)
}

// Close closes the loop (asyncio's close): the ready queue and the timers
// are discarded without running, the selector is closed, and every task
// still pending is reported to the exception handler ("Task was destroyed
// but it is pending!") and its goroutine is unwound (its deferred calls
// run; any await in them returns a CancelledError at once). A task whose
// await of an outside operation already has its effect (a value Recv took,
// a Go call that returned, its outcome queued while the loop was stopped)
// gets that outcome instead, and is unwound at its next await (TASK-9). Close is
// idempotent and returns an error for a running loop; called from a
// deferred call of a task it is unwinding, it returns nil at once and the
// Close in progress finishes. Called on the other side of a
// testing/synctest bubble from where the loop was created, it returns a
// *RuntimeError and changes nothing once the loop has run (its task
// goroutines belong to that side): close it where it was created.
func (l *Loop) Close() error {
	l.checkThreadAlways("Close")
	if l.running.Load() {
		return runtimeErrorf("Cannot close a running event loop")
	}
	if l.closed || l.closing {
		// closing: called again from a deferred call of a task this
		// Close is unwinding (its goroutine is running: resuming it to
		// unwind it again would be a fatal error); that Close finishes.
		return nil
	}
	if err := l.checkCloseSide("Close"); err != nil {
		return err
	}
	l.closing = true
	defer func() { l.closing = false }()
	// In rounds: the deferred calls of a task being unwound may create
	// tasks, which are pending too (never started: reported only).
	var pending []*T
	seen := make(map[*T]bool, len(l.tasks))
	for {
		var round []*T
		for _, t := range l.tasks {
			if !seen[t] {
				seen[t] = true
				round = append(round, t)
			}
		}
		if len(round) == 0 {
			break
		}
		for _, t := range round {
			l.CallExceptionHandler(ExceptionContext{Message: "Task was destroyed but it is pending!", Task: t,
				CreatedAt: t.fut.unretrievedRec().createdAt()})
			if t.started && !t.fut.done() {
				t.kill()
			}
		}
		pending = append(pending, round...)
	}
	l.holder.Store(0) // a killed task held the loop while it unwound
	l.threadsafeMu.Lock()
	l.closed = true
	l.open = false
	l.threadsafePending = nil
	l.threadsafeFlag.Store(false)
	l.threadsafeMu.Unlock()
	l.closeSnapshotRequests() // its callback was in the queue just dropped
	l.releaseWorkers()        // the pooled task goroutines (switch.go)
	// After the pending tasks' deferred calls (they may fail futures) and
	// once the cleanups can no longer queue a report.
	l.reportUnretrievedAtClose()
	l.ready.clear()
	l.metrics.entries -= uint64(l.snapshotLeft) // discarded, never run
	l.snapshotLeft = 0
	for _, s := range l.timers {
		s.t.inHeap = false
	}
	l.timers = nil
	l.cancelledTimers = 0
	for _, t := range pending {
		t.endContext() // after closed is set: the cause is ErrLoopClosed
	}
	l.cancelLog, l.cancelLogNext = nil, 0 // it references tasks
	l.tasks = nil
	for _, h := range l.closeHooks { // OnClose
		if fn := h.fn; fn != nil {
			h.fn = nil
			l.runCloseHook(fn)
		}
	}
	l.closeHooks, l.closeHooksLive = nil, 0
	l.failThreadsafeFutures()
	if l.sel != nil {
		err := l.sel.close()
		l.sel, l.fds = nil, nil
		return err
	}
	return nil
}

// closeHook is one OnClose registration; fn is nil once it ran or was
// stopped.
type closeHook struct{ fn func() }

// OnClose registers fn to run when l is closed, and returns a function
// that unregisters it, reporting whether that kept fn from running (the
// shape of context.AfterFunc). It is how something that lives on the loop
// (a socket, a server, a worker goroutine) makes sure it does not outlive
// it: Close calls the functions still registered in registration order,
// after every pending task was unwound (so deferred cleanup in tasks comes
// first) and before the selector is closed. The loop is closed by then:
// fn may release resources and call RemoveReader/RemoveWriter, but
// scheduling (CallSoon, CreateTask, timers) panics with ErrLoopClosed.
// Like the other Loop methods, OnClose and the returned function must be
// called on the loop's goroutine (or while it is not running); OnClose
// panics with an error wrapping ErrLoopClosed on a closed loop.
func (l *Loop) OnClose(fn func()) (stop func() bool) {
	l.checkThread("OnClose")
	l.checkClosed()
	if fn == nil {
		panic(&ValueError{Msg: "OnClose: nil function"})
	}
	h := &closeHook{fn: fn}
	l.closeHooks = append(l.closeHooks, h)
	l.closeHooksLive++
	return func() bool {
		if h.fn == nil {
			return false
		}
		h.fn = nil
		l.closeHooksLive--
		l.compactCloseHooks()
		return true
	}
}

// runCloseHook runs one OnClose function; a panic is reported (LOOP-12)
// and the other hooks still run.
func (l *Loop) runCloseHook(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(ExceptionContext{Message: "Exception in close hook " + funcName(fn), Err: newPanicError(r)})
		}
	}()
	fn()
}

// compactCloseHooks drops stopped hooks once they are most of the slice,
// so a long-lived loop that opens and closes many sockets stays small.
func (l *Loop) compactCloseHooks() {
	if l.closed || len(l.closeHooks) < 64 || l.closeHooksLive > len(l.closeHooks)/2 {
		return
	}
	kept := l.closeHooks[:0]
	for _, h := range l.closeHooks {
		if h.fn != nil {
			kept = append(kept, h)
		}
	}
	clear(l.closeHooks[len(kept):])
	l.closeHooks = kept
}

// onClose registers fn to run when the loop is closed (executor shutdown).
func (l *Loop) onClose(fn func()) { l.OnClose(fn) }

// reportCallbackPanic sends a panic that escaped a callback to the
// exception handler (LOOP-12). As in asyncio, whose every callback runs
// from a Handle, the context names one: a callback queued without a
// Handle of its own (a done callback, a signal handler's call) gets one
// made for the report.
func (l *Loop) reportCallbackPanic(r any, fn func(), h *Handle) {
	if h == nil {
		h = &Handle{fn: fn}
	}
	l.CallExceptionHandler(ExceptionContext{
		Message: "Exception in callback " + funcName(fn),
		Err:     newPanicError(r),
		Handle:  h,
	})
}

// coarseTime is Time without a clock read: exact on virtual time, else
// the clock as the loop last read it.
func (l *Loop) coarseTime() time.Duration {
	if l.virtual {
		return l.virtualNow
	}
	return l.coarseNow
}

// pollBlocking is poll for a wait that may block, timed for Stats.
func (l *Loop) pollBlocking(timeout time.Duration) {
	t0 := l.Time()
	l.poll(timeout)
	t1 := l.Time()
	l.metrics.pollTime += t1 - t0
	l.coarseNow = t1
}

// SetBeforePoll sets fn to run on the loop right before each poll for I/O,
// once per iteration, before the poll's timeout is computed (Redis ae.c's
// beforesleep): whatever fn schedules keeps that poll from blocking. Use it
// to batch work once per iteration, e.g. flush buffered writes. nil removes
// the hook. A panic in fn is reported to the exception handler and the
// loop goes on, as for a callback. Call it from the goroutine running the
// loop (or before the loop runs).
func (l *Loop) SetBeforePoll(fn func()) { l.beforePoll = fn }

// SetAfterPoll sets fn to run on the loop right after each poll for I/O,
// before the ready file descriptors' and due timers' callbacks are queued
// (ae.c's aftersleep); what fn schedules with CallSoon runs in the same
// iteration. It does not run when a loop on virtual time stops with
// ErrDeadlock (there was no poll). nil removes the hook; panics are
// contained as in SetBeforePoll.
func (l *Loop) SetAfterPoll(fn func()) { l.afterPoll = fn }

// runPollHook runs a poll hook, reporting a panic to the exception handler
// (LOOP-12) instead of letting it take the loop down.
func (l *Loop) runPollHook(fn func(), which string) {
	defer func() {
		if r := recover(); r != nil {
			l.CallExceptionHandler(ExceptionContext{
				Message: "Exception in " + which + " hook " + funcName(fn),
				Err:     newPanicError(r),
			})
		}
	}()
	// User code runs next on this goroutine: it must be the holder (the
	// driver may have left a parked task's token there, see retake).
	l.takeLoop(gid.Token())
	fn()
}
