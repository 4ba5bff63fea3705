package asyncio

// A group of loops: every core (the main/sub reactor of Netty's
// EventLoopGroup, Seastar's shard per core). Each loop of a group is an
// unchanged asyncio loop on a goroutine of its own; nothing is shared
// between them but their thread-safe entries (CallSoonThreadsafe, which
// cross-loop calls, crossloop.go, and cross-loop queues, crossqueue.go,
// use). There is no work stealing: a task lives on the loop that created
// it for its whole life.

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// FailurePolicy says what a LoopGroup does when the main of one of its
// loops fails (returns an error other than a cancellation caused by the
// group, or panics).
type FailurePolicy int

const (
	// CancelGroupOnFailure, the default, cancels the mains of the other
	// loops, as a TaskGroup cancels the siblings of a failed child: a
	// group whose loops serve one program should not go on with one loop
	// missing. Their RunWith then returns an error matching
	// ErrGroupCancelled, which RunEach does not report as a failure.
	CancelGroupOnFailure FailurePolicy = iota
	// IsolateFailure leaves the other loops running: the failure is
	// reported when RunEach returns, with every other loop's outcome.
	IsolateFailure
)

// GroupOption configures NewLoopGroup.
type GroupOption func(*groupConfig)

type groupConfig struct {
	n        int
	lock     bool
	loopOpts []LoopOption
	policy   FailurePolicy
}

// WithLoops sets the number of loops of the group (default
// runtime.GOMAXPROCS(0)). n < 1 panics with a *ValueError.
func WithLoops(n int) GroupOption {
	if n < 1 {
		panic(valueErrorf("WithLoops: %d loops (want at least 1)", n))
	}
	return func(c *groupConfig) { c.n = n }
}

// WithLockOSThread runs each loop of the group on a goroutine of its own
// locked to its own OS thread (runtime.LockOSThread) from NewLoopGroup to
// Close: every task step of the loop runs on that thread. Close must then
// be called, or the goroutines (and threads) stay.
func WithLockOSThread() GroupOption { return func(c *groupConfig) { c.lock = true } }

// WithGroupLoopOptions gives every loop of the group opts (WithDebug(),
// WithVirtualTime(), ...).
func WithGroupLoopOptions(opts ...LoopOption) GroupOption {
	return func(c *groupConfig) { c.loopOpts = append(c.loopOpts, opts...) }
}

// WithFailurePolicy sets what the failure of one loop's main does to the
// others (default CancelGroupOnFailure). An unknown policy panics with a
// *ValueError.
func WithFailurePolicy(p FailurePolicy) GroupOption {
	if p != CancelGroupOnFailure && p != IsolateFailure {
		panic(valueErrorf("WithFailurePolicy: unknown policy %d", p))
	}
	return func(c *groupConfig) { c.policy = p }
}

// LoopGroup is N event loops run together, each on a goroutine of its own,
// so that a program uses every core. Each loop keeps asyncio's semantics
// exactly: its tasks run one at a time, in its own order, and never move
// to another loop. Loops talk through SubmitTo / CallOn / CallFuncOn and
// CrossQueue.
//
// Run the group with RunEach (one main per loop) or RunGroup (one main on
// loop 0, the other loops serving what it hands them); either may be
// called again once it returned. Close shuts every loop down. A LoopGroup
// is for one goroutine at a time, except Close, which any goroutine may
// call at any time.
type LoopGroup struct {
	cfg     groupConfig
	loops   []*Loop
	runners []*Runner

	mu      sync.Mutex
	closed  bool
	closing chan struct{} // closed when the first Close has returned
	running bool
	runDone chan struct{} // closed when the current run has returned
	gen     uint64        // the current run, for late cancellations
	mains   []*T          // the current run's mains, by loop (their loops' goroutines only)
	// pendingInterrupts are cancellations of mains that had not taken
	// their first step yet, delivered as they take it (by loop, on the
	// loops' goroutines only; cleared when a run begins).
	pendingInterrupts []error
	// closers are the goroutines closing each loop in Close (gid tokens,
	// 0: none): a Close called from one of them (an OnClose hook, a
	// deferred call of a task being unwound) would wait for itself.
	closers []atomic.Uint64
	// threads are the loops' own locked goroutines (WithLockOSThread).
	threads []chan func()
}

// NewLoopGroup returns a group of new, not yet running loops. Each loop is
// named "loop <i>" (Loop.Name), which the watchdog's report and the
// group's snapshots carry. A nil option (or a nil loop option given to
// WithGroupLoopOptions) panics with a *ValueError, before any loop is made.
func NewLoopGroup(opts ...GroupOption) *LoopGroup {
	cfg := groupConfig{n: runtime.GOMAXPROCS(0)}
	for i, o := range opts {
		if o == nil {
			panic(valueErrorf("NewLoopGroup: nil GroupOption at index %d", i))
		}
		o(&cfg)
	}
	checkLoopOptions("NewLoopGroup: WithGroupLoopOptions", cfg.loopOpts)
	g := &LoopGroup{cfg: cfg, closers: make([]atomic.Uint64, cfg.n)}
	for i := 0; i < cfg.n; i++ {
		lopts := append(append([]LoopOption(nil), cfg.loopOpts...), WithLoopName(fmt.Sprintf("loop %d", i)))
		r := NewRunner(lopts...)
		g.runners = append(g.runners, r)
		g.loops = append(g.loops, r.Loop())
	}
	g.mains = make([]*T, cfg.n)
	g.pendingInterrupts = make([]error, cfg.n)
	if cfg.lock {
		g.startThreads()
	}
	return g
}

// Len returns the number of loops.
func (g *LoopGroup) Len() int { return len(g.loops) }

// Loop returns loop i (0 <= i < Len); any other i panics with a
// *ValueError. Any goroutine may call it.
func (g *LoopGroup) Loop(i int) *Loop {
	if i < 0 || i >= len(g.loops) {
		panic(valueErrorf("LoopGroup.Loop: index %d out of range [0, %d)", i, len(g.loops)))
	}
	return g.loops[i]
}

// Running reports whether RunEach or RunGroup is running g now (its loops
// may still be starting). Any goroutine may call it.
func (g *LoopGroup) Running() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}

// Loops returns the group's loops, in index order (a new slice).
func (g *LoopGroup) Loops() []*Loop { return append([]*Loop(nil), g.loops...) }

// Index returns l's index in the group, or -1 if l is not one of its
// loops.
func (g *LoopGroup) Index(l *Loop) int {
	for i, x := range g.loops {
		if x == l {
			return i
		}
	}
	return -1
}

// checkGroupMade panics with a *ValueError, before any change, when g was
// not made by NewLoopGroup: a nil group, or the zero LoopGroup, which has
// no loops (RunEach ran nothing and reported success, RunGroup failed
// with an index out of range).
func checkGroupMade(g *LoopGroup, op string) {
	if g == nil || len(g.loops) == 0 {
		panic(valueErrorf("%s: nil or zero LoopGroup (make it with NewLoopGroup)", op))
	}
}

// beginRun marks the group running, or says why it cannot run.
func (g *LoopGroup) beginRun(op string) (uint64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, runtimeErrorf("%s: the loop group is closed", op)
	}
	if g.running {
		return 0, runtimeErrorf("%s: the loop group is already running", op)
	}
	for i, l := range g.loops { // one closed on its own: run nothing
		if l.IsClosed() {
			return 0, &RuntimeError{Msg: fmt.Sprintf("%s: loop %d of the group is closed: Event loop is closed", op, i), Err: ErrLoopClosed}
		}
	}
	// RunWith refuses each loop on the wrong side of a testing/synctest
	// bubble, but a WithLockOSThread loop's RunWith runs on its own
	// goroutine, on the loop's side, and answers through channels made
	// on the caller's: refused here, for every group, before anything runs.
	if err := g.loops[0].checkSameBubble(); err != nil {
		return 0, runtimeErrorf("%s: %v", op, err)
	}
	g.running = true
	g.runDone = make(chan struct{})
	g.gen++
	clear(g.pendingInterrupts) // (no loop runs: nothing else touches them now)
	return g.gen, nil
}

func (g *LoopGroup) endRun() {
	g.mu.Lock()
	g.running = false
	close(g.runDone)
	g.mu.Unlock()
}

// onThread runs fn for loop i and waits for it. With WithLockOSThread it
// runs on loop i's own goroutine, locked to its OS thread for the group's
// life: the Go runtime resumes a task's coroutine only on the thread it
// was created on when that thread is locked, so everything that runs loop
// i (its mains, its serving, its Close) must run there; it reports
// whether fn ended that goroutine (runtime.Goexit, e.g. t.FailNow in a
// main), which a new locked goroutine then replaces. Without it, fn runs
// on the calling goroutine, and a Goexit ends the caller.
func (g *LoopGroup) onThread(i int, fn func()) (exited bool) {
	if g.threads == nil {
		fn()
		return false
	}
	done := make(chan struct{})
	returned := false
	var panicked any // a panic out of fn, passed on to the caller
	g.threads[i] <- func() {
		defer close(done)
		defer func() {
			if !returned {
				panicked = recover() // nil for a Goexit
			}
		}()
		fn()
		returned = true
	}
	<-done
	if panicked != nil {
		// On the locked goroutine nobody could recover it: the process
		// would die. Without WithLockOSThread it reaches the caller too.
		panic(panicked)
	}
	return !returned
}

// startThreads starts the locked goroutine of every loop.
func (g *LoopGroup) startThreads() {
	g.threads = make([]chan func(), len(g.loops))
	for i := range g.threads {
		work := make(chan func())
		g.threads[i] = work
		go runThread(work)
	}
}

// runThread is a loop's locked goroutine: it runs the work sent to it
// until the channel is closed. Work that ends the goroutine
// (runtime.Goexit) ends its thread too (the runtime does not reuse a
// thread whose locked goroutine exited); another locked goroutine takes
// the channel over, so that the group can still run and close that loop
// (tasks started on the lost thread cannot be resumed any more: Close
// reports them).
func runThread(work chan func()) {
	runtime.LockOSThread()
	drained := false
	defer func() {
		if drained {
			runtime.UnlockOSThread()
			return
		}
		go runThread(work)
	}()
	for fn := range work {
		fn()
	}
	drained = true
}

// stopThreads ends the locked goroutines (Close).
func (g *LoopGroup) stopThreads() {
	for _, work := range g.threads {
		close(work)
	}
	g.threads = nil
}

// interruptAll cancels the main of every loop but skip (-1: all) through
// the Runner's interruption path: a main that then ends cancelled by that
// request alone makes its RunWith return reason.
func (g *LoopGroup) interruptAll(gen uint64, skip int, reason error) {
	for j, r := range g.runners {
		if j == skip {
			continue
		}
		r, j := r, j
		_, _ = g.loops[j].CallSoonThreadsafe(func() {
			g.mu.Lock()
			same := g.gen == gen && g.running
			g.mu.Unlock()
			// r.interrupts is set only while RunWith runs loop j's main
			// of this run. A callback submitted before the main's first
			// step runs before that step (LOOP-1): the main then gets
			// the cancellation as it starts (startMain), so that every
			// main runs, and its cleanup with it, as when it came later.
			if !same || r.interrupts == nil {
				return
			}
			if g.mains[j] == nil || r.interrupts.main != g.mains[j] {
				g.pendingInterrupts[j] = reason
				return
			}
			r.interrupts.interrupt(reason)
		})
	}
}

// startMain records t as loop i's main, in its first step, and gives it a
// cancellation that came before (interruptAll): it arrives at t's first
// await.
func (g *LoopGroup) startMain(i int, t *T) {
	g.mains[i] = t
	if reason := g.pendingInterrupts[i]; reason != nil {
		g.pendingInterrupts[i] = nil
		g.runners[i].interrupts.interrupt(reason)
	}
}

// RunEach runs main(t, i) as the main task of every loop i of g, each loop
// on its own goroutine, until every main is done, and returns their
// results by loop index. A loop whose main is done goes on running, to
// serve the other loops' calls, until every main is done. As Run does, the first SIGINT cancels every main
// and waits for their cleanup (a second one stops waiting); the error then
// matches ErrInterrupted. When a main fails, the group's FailurePolicy
// decides whether the other mains are cancelled (the default) or go on.
// The error is nil when every main succeeded; otherwise it joins a
// *LoopError per loop whose main failed (a main cancelled only because
// another failed is not listed). Tasks left on the loops stay until Close,
// as with RunWith on a Runner. RunEach returns an error, running nothing, when
// g is closed or already running, when one of its loops was closed on
// its own (that error matches ErrLoopClosed), or when it is called on the
// other side of a testing/synctest bubble from where g was made. A nil
// main, or a g not made by
// NewLoopGroup (nil, or the zero LoopGroup), panics with a *ValueError.
func RunEach[V any](g *LoopGroup, main func(t *T, i int) (V, error)) ([]V, error) {
	checkGroupMade(g, "RunEach")
	if main == nil {
		panic(valueErrorf("RunEach: nil main function"))
	}
	gen, err := g.beginRun("RunEach")
	if err != nil {
		return nil, err
	}
	defer g.endRun()
	n := len(g.loops)
	vals := make([]V, n)
	errs := make([]error, n)
	quits := make([]*Future[struct{}], n)
	for i, l := range g.loops {
		quits[i] = NewFuture[struct{}](l)
	}
	var left sync.WaitGroup // mains not yet done
	left.Add(n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.onThread(i, func() {
				counted := false
				// mainDone applies the failure policy to main i's end
				// and counts it.
				mainDone := func() {
					if errs[i] != nil && g.cfg.policy == CancelGroupOnFailure && !g.cancelledByGroup(errs[i]) {
						g.interruptAll(gen, i, &groupCancelledError{group: g, failed: i})
					}
					if testHookMainDone != nil {
						testHookMainDone(i)
					}
					counted = true
					left.Done()
				}
				defer func() { // a runtime.Goexit in a main (t.FailNow) ends this goroutine
					if !counted {
						errs[i] = runtimeErrorf("the main of loop %d ended its goroutine (runtime.Goexit)", i)
						mainDone() // a failure: the policy applies to it too
					}
				}()
				vals[i], errs[i] = RunWith(g.runners[i], func(t *T) (V, error) {
					g.startMain(i, t)
					return main(t, i)
				})
				mainDone()
				// The loop goes on serving the other loops' calls until
				// every main is done.
				g.serve(g.loops[i], quits[i])
			})
		}()
	}
	left.Wait()
	for i, l := range g.loops {
		quit := quits[i]
		_, _ = l.CallSoonThreadsafe(func() { _ = quit.SetResult(struct{}{}) })
	}
	wg.Wait()
	return vals, g.joinLoopErrors(errs)
}

// RunGroup runs main as the main task of loop 0 of g, while every other
// loop runs, on its own goroutine, serving what main hands it (SubmitTo,
// CallOn, CrossQueue, servers of package aio), until main is done; then
// the other loops stop (their tasks stay until Close) and RunGroup
// returns main's result. Ctrl-C is Run's: the first SIGINT cancels main,
// whose cleanup can still use every loop. On virtual time an idle serving
// loop waits for calls instead of reporting ErrDeadlock. It returns an
// error, running nothing, when g is closed or already running, or when
// one of its loops was closed on its own (matching ErrLoopClosed), or on
// the other side of a testing/synctest bubble from where g was made. A
// nil main, or a g not made by NewLoopGroup
// (nil, or the zero LoopGroup), panics with a *ValueError.
func RunGroup[V any](g *LoopGroup, main func(t *T) (V, error)) (V, error) {
	checkGroupMade(g, "RunGroup")
	if main == nil {
		panic(valueErrorf("RunGroup: nil main function"))
	}
	var zero V
	gen, err := g.beginRun("RunGroup")
	if err != nil {
		return zero, err
	}
	defer g.endRun()
	n := len(g.loops)
	quits := make([]*Future[struct{}], n)
	var wg sync.WaitGroup
	// The serving loops stop when main is done, also when main ended the
	// caller's goroutine (runtime.Goexit, t.FailNow): Close must not find
	// them running.
	defer func() {
		for j := 1; j < n; j++ {
			if quit := quits[j]; quit != nil { // (nil: its loop never started serving)
				_, _ = g.loops[j].CallSoonThreadsafe(func() { _ = quit.SetResult(struct{}{}) })
			}
		}
		wg.Wait()
	}()
	for j := 1; j < n; j++ {
		l := g.loops[j]
		quit := NewFuture[struct{}](l)
		quits[j] = quit
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.onThread(j, func() { g.serve(l, quit) })
		}()
	}
	var v V
	exited := g.onThread(0, func() {
		v, err = RunWith(g.runners[0], func(t *T) (V, error) {
			g.startMain(0, t)
			return main(t)
		})
	})
	_ = gen
	if exited { // on loop 0's locked goroutine, as RunEach reports it
		v, err = zero, runtimeErrorf("the main of loop 0 ended its goroutine (runtime.Goexit)")
	}
	if err != nil && !g.cancelledByGroup(err) {
		err = &LoopError{Index: 0, Err: err}
	}
	return v, err
}

// serve runs l until quit is done. Meanwhile an idle loop on virtual time
// waits for calls instead of reporting ErrDeadlock (its clock still jumps
// to its next timer).
func (g *LoopGroup) serve(l *Loop, quit *Future[struct{}]) {
	l.grp.serving = true
	defer func() { l.grp.serving = false }()
	task := CreateTask(l, func(t *T) (struct{}, error) {
		_, err := quit.Await(t)
		return struct{}{}, err
	}, WithName("group-serve"))
	_ = l.RunUntilComplete(task)
}

// Close shuts every loop of g down, as Runner.Close does for one (RUN-3):
// on each loop, concurrently, every task still pending is cancelled and
// the loop runs until they are done, the default executor is shut down,
// and the loop is closed (its sockets, servers and child processes with
// it). Cross-loop calls still in flight end: a caller whose target closed
// gets an error wrapping ErrLoopClosed, a remote task whose caller closed
// is cancelled. If a run is in progress (from another goroutine), Close
// first cancels every main and waits for the run to return. It returns
// the loops' errors joined, and is idempotent: a later call, or one made
// while another goroutine's Close is still at work, waits until the
// group is closed and returns nil. Called from a task or
// callback of one of the group's loops, or from what runs inside the
// group's Close of a loop (an OnClose hook, a deferred call of a task
// being unwound), or from a job of the default executor of one of its
// loops (RunInExecutor), it returns an error and changes nothing (it
// would wait for itself). Called on the other side of a testing/synctest
// bubble from where the group was made, once a loop ran (or, with
// WithLockOSThread, always), it returns a *RuntimeError and changes
// nothing, as Loop.Close does.
func (g *LoopGroup) Close() error {
	me := gid.Token()
	for i, l := range g.loops {
		if l.OnLoopGoroutine() || g.closers[i].Load() == me {
			// It would wait for the run, which waits for this task (or
			// for the Close running it).
			return runtimeErrorf("LoopGroup.Close called from loop %d of the group, which it would wait for; return from the mains instead (or cancel them)", i)
		}
	}
	if i := g.Index(executorLoopOf(me)); i >= 0 {
		// Closing loop i shuts its executor down, waiting for this job.
		return runtimeErrorf("LoopGroup.Close called from a job of the default executor of loop %d of the group, which it would wait for; "+
			"call it from a goroutine of your own (asyncio.Go, or go g.Close())", i)
	}
	g.mu.Lock()
	if g.closed {
		closing := g.closing
		g.mu.Unlock()
		if testHookCloseWaits != nil {
			testHookCloseWaits()
		}
		<-closing
		return nil
	}
	// The loops are closed on goroutines this call starts, or (with
	// WithLockOSThread) by their own goroutines, handed channels it
	// makes: on its side of a testing/synctest bubble, which must be
	// theirs once they ran or have goroutines of their own.
	if err := g.checkCloseSide(); err != nil {
		g.mu.Unlock()
		return err
	}
	g.closed = true
	g.closing = make(chan struct{})
	defer close(g.closing)
	running, done, gen := g.running, g.runDone, g.gen
	g.mu.Unlock()
	if running {
		g.interruptAll(gen, -1, &groupCancelledError{group: g, failed: -1})
		// A serving loop's quit comes when main is done.
		<-done
	}
	errs := make([]error, len(g.runners))
	var wg sync.WaitGroup
	for i, r := range g.runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.onThread(i, func() {
				g.closers[i].Store(gid.Token())
				defer g.closers[i].Store(0)
				errs[i] = r.Close()
			})
		}()
	}
	wg.Wait()
	if g.threads != nil {
		g.stopThreads()
	}
	return errors.Join(errs...)
}

// checkCloseSide is Loop.checkCloseSide for the group's loops (made
// together, on one side), whose locked goroutines, if any, are of that
// side too.
func (g *LoopGroup) checkCloseSide() error {
	l := g.loops[0]
	createdInside, inside := l.bubbleSides()
	if inside == createdInside {
		return nil
	}
	if g.threads != nil {
		return closeSideError("LoopGroup.Close", createdInside, inside)
	}
	for _, l := range g.loops {
		if err := l.checkCloseSide("LoopGroup.Close"); err != nil {
			return err
		}
	}
	return nil
}

// testHookCloseWaits, when set by a test, runs when a Close starts to
// wait for another goroutine's Close.
var testHookCloseWaits func()

// testHookMainDone, when set by a test, runs after the failure policy
// has dealt with the end of loop i's main.
var testHookMainDone func(i int)

// groupCancelledError is the reason a main cancelled by its group ends
// with: the group's failure policy (the main of loop failed failed), or
// its Close (failed -1).
type groupCancelledError struct {
	group  *LoopGroup
	failed int
}

func (e *groupCancelledError) Error() string {
	if e.failed < 0 {
		return "asyncio: cancelled by the loop group: the loop group is closing"
	}
	return fmt.Sprintf("asyncio: cancelled by the loop group: the main of loop %d failed", e.failed)
}

// Is matches ErrGroupCancelled, and the groupReason of its own group.
func (e *groupCancelledError) Is(target error) bool {
	if r, ok := target.(groupReason); ok {
		return r.group == e.group
	}
	return target == ErrGroupCancelled
}

// groupReason matches (errors.Is) the cancellations one group made.
type groupReason struct{ group *LoopGroup }

func (groupReason) Error() string { return "asyncio: a cancellation by this loop group" }

// cancelledByGroup reports whether a main's error is g cancelling it (its
// failure policy or its Close), not a failure of the main's own. A main
// that returns another group's ErrGroupCancelled (a nested group it ran)
// failed.
func (g *LoopGroup) cancelledByGroup(err error) bool { return errors.Is(err, groupReason{g}) }

// joinLoopErrors turns the mains' errors into RunEach's: nil, or a
// *LoopError per failed loop, joined. When every error is an interruption
// (Ctrl-C), the error is ErrInterrupted's; mains cancelled by the group
// because another failed are left out when some loop failed.
func (g *LoopGroup) joinLoopErrors(errs []error) error {
	var out []error
	failed := false
	for _, err := range errs {
		if err != nil && !g.cancelledByGroup(err) {
			failed = true
		}
	}
	for i, err := range errs {
		if err == nil || (failed && g.cancelledByGroup(err)) {
			continue
		}
		out = append(out, &LoopError{Index: i, Err: err})
	}
	return errors.Join(out...)
}

// loopGroupState is what a loop keeps for groups and cross-loop calls
// (one field of Loop).
type loopGroupState struct {
	name    string // WithLoopName
	serving bool   // a LoopGroup's serving loop: idle waits for calls
	// shuttingDown: the loop's pending tasks are being cancelled because
	// it is closing (cancelAllTasks, Runner.Close).
	shuttingDown bool
	// calls lists the cross-loop calls in flight from this loop (this
	// loop's goroutine only); linked says this loop is registered to fail
	// them when it closes, and targets the loops that will tell it when
	// they close (crossloop.go).
	calls   crossNode
	linked  bool
	targets map[*Loop]*crossLink
}

// Name returns the loop's name, given with WithLoopName (a LoopGroup
// names its loops "loop 0", "loop 1", ...); "" if it has none. Any
// goroutine may call it.
func (l *Loop) Name() string { return l.grp.name }

// nameLabel is the loop's name for messages: "" or " (<name>)".
func (l *Loop) nameLabel() string {
	if l.grp.name == "" {
		return ""
	}
	return " (" + l.grp.name + ")"
}

// Spread runs fn(t, i) for every i in [0, n) as tasks spread over the
// loops of g, task i on loop i % g.Len() (a fan-out client: each task
// opens its connections on its own loop), and suspends the running task t
// until all are done. It returns the results by i and the failures
// joined (nil when none failed). Cancelling t cancels every task still
// running, with t's cancellation message, and Spread returns the
// *CancelledError once they are asked to stop. n < 0, a nil fn, or a g not made by NewLoopGroup (nil, or
// the zero LoopGroup) panics with a *ValueError; a loop of g
// that is closed fails its share with an error wrapping ErrLoopClosed.
func Spread[V any](t *T, g *LoopGroup, n int, fn func(t *T, i int) (V, error)) ([]V, error) {
	if g == nil || len(g.loops) == 0 || fn == nil || n < 0 {
		panic(valueErrorf("Spread: nil or zero group (make it with NewLoopGroup), nil function, or n < 0 (%d)", n))
	}
	t.checkRunning("Spread")
	own := t.fut.loop
	futs := make([]AwaitableOf[V], n)
	vals := make([]V, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		l := g.loops[i%len(g.loops)]
		call := func(rt *T) (V, error) { return fn(rt, i) }
		if l == own {
			futs[i] = CreateTask(t, call)
			continue
		}
		f, err := SubmitTo(t, l, call)
		if err != nil {
			errs[i] = err
			continue
		}
		futs[i] = f
	}
	for i, f := range futs {
		if f == nil {
			continue
		}
		v, err := f.Await(t)
		if err != nil && t.Cancelling() > 0 && IsCancelled(err) {
			// With t's message, as gather passes its own to every child.
			var msg []string
			if ce := (*CancelledError)(nil); errors.As(err, &ce) && ce.Msg != "" {
				msg = []string{ce.Msg}
			}
			for _, rest := range futs[i:] {
				if rest != nil {
					rest.Cancel(msg...)
				}
			}
			var zero []V
			return zero, err
		}
		vals[i], errs[i] = v, err
	}
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("Spread: task %d: %w", i, err))
		}
	}
	return vals, errors.Join(failed...)
}
