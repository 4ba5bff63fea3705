// Package cancelcheck tests a coroutine's cancellation handling
// systematically. Check runs the coroutine once on the virtual clock to
// count its suspension points (the awaits where it actually suspends),
// then once per point with a cancellation injected exactly there, and
// reports for each run whether the coroutine ended cancelled (or
// deliberately swallowed the cancellation with Uncancel), and whether it
// left tasks running, a Lock or Semaphore held, a Queue unbalanced (items
// taken without TaskDone), or a goroutine behind.
//
//	func TestWorkerCancellation(t *testing.T) {
//		cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
//			lk := asyncio.NewLock()
//			w.Lock("state", lk)
//			return worker(t, lk)
//		})
//	}
//
// The coroutine must be deterministic on the virtual clock (the same
// awaits in the same order on every run); Check notes a run whose
// suspension points differ from the first run's, and reports a point that a
// run does not reach as a problem (it was not tested). The coroutine must
// also end: a run that goes on suspending far beyond the first run (or the
// first run itself, past 100000 points or a million suspensions of its
// tasks) is stopped and reported as not ended. Runs are sequential and
// check for leaked goroutines with goleak: do not run Check in a parallel
// test.
package cancelcheck

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/hooks"
	"github.com/go-asyncio/asyncio/internal/textquote"
	"go.uber.org/goleak"
)

// Func is the coroutine under test. It runs as the main task of a fresh
// loop on virtual time, once per run; w registers the primitives whose
// state Check verifies after each run.
type Func func(t *asyncio.T, w *Watch) error

// Option configures Check.
type Option func(*config)

type config struct {
	allTasks   bool
	cancelMain bool
	maxRuns    int
	loopOpts   []asyncio.LoopOption
}

// AllTasks makes Check count the suspension points of every task of the
// loop, in the order they happen, and cancel whichever task suspends at
// the chosen point (by default only the main task's points count). With
// CancelMain it cancels the main task instead.
func AllTasks() Option { return func(c *config) { c.allTasks = true } }

// CancelMain makes Check cancel the main task at every chosen point, even
// when the task suspending there is another one (with AllTasks): the whole
// operation is cancelled at every moment where any of its tasks waits,
// which is how structured code (a TaskGroup, a Timeout) is cancelled from
// outside.
func CancelMain() Option { return func(c *config) { c.cancelMain = true } }

// MaxRuns caps the number of cancellation runs (default 1000); the points
// beyond it are skipped and the report says so. n <= 0 makes only the
// first run.
func MaxRuns(n int) Option { return func(c *config) { c.maxRuns = max(n, 0) } }

// WithLoopOptions adds loop options to every run's loop (virtual time and
// task stacks are always on), e.g. asyncio.WithDebug(). A nil option
// panics with a *asyncio.ValueError at once.
func WithLoopOptions(opts ...asyncio.LoopOption) Option {
	for i, o := range opts {
		if o == nil {
			panic(&asyncio.ValueError{Msg: fmt.Sprintf("cancelcheck.WithLoopOptions: nil LoopOption at index %d", i)})
		}
	}
	return func(c *config) { c.loopOpts = append(c.loopOpts, opts...) }
}

// Watch registers the primitives whose state Check verifies after each run.
// Register a primitive right after creating it, from the coroutine (its
// main task or any task it starts). A nil primitive (or the zero Queue)
// panics with a *asyncio.ValueError there, failing the coroutine with it,
// rather than crashing the check unseen at the end of the run.
type Watch struct {
	t      *asyncio.T
	checks []func(t *asyncio.T) string // each returns a problem, or ""
}

// watchNil is the *ValueError of a nil primitive given to a Watch: the
// coroutine fails with it at once, where the check at the end of the run
// would crash unseen (its task's error is not the coroutine's).
func watchNil(what, name string) *asyncio.ValueError {
	return &asyncio.ValueError{Msg: fmt.Sprintf("cancelcheck: Watch.%s(%q): nil %s", what, name, what)}
}

// Lock registers a lock that must be unlocked at the end of each run.
func (w *Watch) Lock(name string, lk *asyncio.Lock) {
	if lk == nil {
		panic(watchNil("Lock", name))
	}
	w.checks = append(w.checks, func(*asyncio.T) string {
		if lk.Locked() {
			return fmt.Sprintf("Lock %q left held", name)
		}
		return ""
	})
}

// Semaphore registers a semaphore that must have as many free units at
// the end of each run as when it was registered.
func (w *Watch) Semaphore(name string, s *asyncio.Semaphore) {
	if s == nil {
		panic(watchNil("Semaphore", name))
	}
	w.semaphore(name, s)
}

// BoundedSemaphore is Semaphore for a *asyncio.BoundedSemaphore.
func (w *Watch) BoundedSemaphore(name string, s *asyncio.BoundedSemaphore) {
	if s == nil {
		panic(watchNil("BoundedSemaphore", name))
	}
	w.semaphore(name, s)
}

type semaphore interface {
	Acquire(t *asyncio.T) error
	Release() error
	Locked() bool
}

// maxProbe bounds the free units counted in a semaphore.
const maxProbe = 1 << 20

// freeUnits counts a semaphore's free units by acquiring them while it is
// not locked (which never suspends), then gives them back.
func freeUnits(t *asyncio.T, s semaphore) int {
	n := 0
	for n < maxProbe && !s.Locked() {
		if s.Acquire(t) != nil {
			break
		}
		n++
	}
	for range n {
		_ = s.Release()
	}
	return n
}

func (w *Watch) semaphore(name string, s semaphore) {
	// The task registering it: the main task's, or another task of the
	// coroutine's (Acquire must be called by the running task).
	initial := freeUnits(asyncio.CurrentTask(w.t), s)
	w.checks = append(w.checks, func(t *asyncio.T) string {
		switch free := freeUnits(t, s); {
		case free < initial:
			return fmt.Sprintf("Semaphore %q: %d of %d units left held", name, initial-free, initial)
		case free > initial:
			return fmt.Sprintf("Semaphore %q: released %d more times than acquired", name, free-initial)
		}
		return ""
	})
}

// Queue registers a queue on which every item taken must have been marked
// done (TaskDone) by the end of each run. Items left in the queue are not a
// problem (a cancelled consumer leaves them); items taken and never marked
// done are (Join would wait forever).
func Queue[V any](w *Watch, name string, q *asyncio.Queue[V]) {
	if q == nil {
		panic(watchNil("Queue", name))
	}
	_ = q.Len() // the zero Queue panics here, with the core's *ValueError, not in the check
	w.checks = append(w.checks, func(*asyncio.T) string {
		for {
			if _, err := q.GetNowait(); err != nil {
				break
			}
			_ = q.TaskDone()
		}
		undone := 0
		for q.TaskDone() == nil {
			undone++
		}
		if undone > 0 {
			return fmt.Sprintf("Queue %q unbalanced: %d items taken without TaskDone", name, undone)
		}
		return ""
	})
}

// Outcome is how a run's cancelled task ended.
type Outcome string

// The outcomes of a run.
const (
	// Completed: no cancellation was injected (the first run), and the
	// coroutine returned nil.
	Completed Outcome = "completed"
	// Cancelled: the task ended cancelled.
	Cancelled Outcome = "cancelled"
	// Swallowed: the task ended normally and withdrew the cancellation
	// with Uncancel: deliberate.
	Swallowed Outcome = "swallowed (uncancelled)"
	// SwallowedNoUncancel: the task ended normally but did not withdraw
	// the cancellation (Cancelling() > 0): code that relies on
	// cancellation (a TaskGroup, a Timeout around it) is misled.
	SwallowedNoUncancel Outcome = "swallowed without Uncancel"
	// Failed: the task ended with an error that is not a cancellation.
	Failed Outcome = "failed"
	// Deadlock: the loop would have blocked forever (a task waits for
	// something that never comes, e.g. after a cancellation was ignored).
	Deadlock Outcome = "deadlock"
	// NotReached: the run ended before the chosen suspension point (the
	// coroutine is not deterministic): a problem, as the point was not
	// tested.
	NotReached Outcome = "point not reached"
	// StillRunning: the cancelled task (not the main one) was still
	// running when the main task returned (see Run.LeftTasks).
	StillRunning Outcome = "still running"
	// NotEnded: the run went on suspending far beyond the first run
	// (for the first run itself: past 100000 points, or a million
	// suspensions of all its tasks) and was stopped: a
	// coroutine that runs until it is cancelled (Check needs one that
	// ends), or one that ignores the cancellation and goes on. When the
	// first run does not end there are no cancellation runs.
	NotEnded Outcome = "did not end"
)

// Run is the result of one run.
type Run struct {
	// Point is the suspension point where the cancellation was injected,
	// 1-based; 0 for the first run, which injects nothing.
	Point int
	// At is where the point is: "function file:line" of the await, and
	// Suspended the task suspending there. When the point was not reached
	// (NotReached), At is where the first run suspended there.
	At, Suspended string
	// Task is the name of the task cancelled at Point (Suspended, or the
	// main task with CancelMain).
	Task string
	// Outcome is how that task ended; Err is its error, and MainErr the
	// main task's when another task was cancelled (AllTasks).
	Outcome Outcome
	Err     error
	MainErr error
	// LeftTasks are the tasks still pending when the main task returned:
	// "name (waiting on what at function file:line)".
	LeftTasks []string
	// Held are the watched primitives left in a bad state (locks and
	// semaphores held, queues unbalanced).
	Held []string
	// IgnoredCancel are the left tasks still running after Check
	// cancelled them and waited (for many suspensions): they ignore the
	// cancellation. Check then closes the loop under them.
	IgnoredCancel []string
	// Leaked describes goroutines still running after the loop closed
	// (goleak's report, with the stacks; Problems has it on one line).
	Leaked string
	// Reported are the errors passed to the loop's exception handler that
	// are problems: a swallowed cancellation (debug mode, see
	// asyncio.SwallowedCancelError) and panics in callbacks. They are
	// seen also when the coroutine sets its own handler, which gets them
	// too.
	Reported []string
	// Notes are remarks that are not problems (a point that moved).
	Notes []string
}

// Problems lists what is wrong with the run ("" entries never).
func (r *Run) Problems() []string {
	var p []string
	switch r.Outcome {
	case SwallowedNoUncancel:
		p = append(p, "the task swallowed the cancellation without Uncancel")
	case Failed:
		if r.Point == 0 {
			p = append(p, "the coroutine fails without any cancellation: "+textquote.Text(r.Err.Error()))
		} else {
			p = append(p, "the cancellation became an error that is not a CancelledError: "+textquote.Text(r.Err.Error()))
		}
	case Deadlock:
		p = append(p, "deadlock: "+deadlockSummary(r.Err))
	case NotEnded:
		if r.Point == 0 {
			p = append(p, "the coroutine does not end: its tasks went on awaiting until Check stopped them (Check needs a coroutine that returns)")
		} else {
			p = append(p, "the run does not end: its tasks went on awaiting after the cancellation until Check stopped them (is the cancellation ignored, as by a retry loop?)")
		}
	case NotReached:
		// No cancellation was injected: the point is untested, which is
		// no "all good" (the coroutine is not deterministic).
		p = append(p, "not tested: the run suspended fewer times than the first (the coroutine is not deterministic)")
	}
	if r.MainErr != nil && r.Outcome != Deadlock && !asyncio.IsCancelled(r.MainErr) {
		p = append(p, "the main task failed: "+textquote.Text(r.MainErr.Error()))
	}
	if len(r.LeftTasks) > 0 {
		p = append(p, "left tasks running: "+strings.Join(r.LeftTasks, ", "))
	}
	if len(r.IgnoredCancel) > 0 {
		p = append(p, "left tasks ignore the cancellation (still running after being cancelled): "+strings.Join(r.IgnoredCancel, ", "))
	}
	p = append(p, r.Held...)
	p = append(p, r.Reported...)
	if r.Leaked != "" {
		p = append(p, "leaked goroutines: "+leakSummary(r.Leaked))
	}
	return p
}

// goroutineHeader matches goleak's line introducing a goroutine.
var goroutineHeader = regexp.MustCompile(`Goroutine \d+ in state [^,]*, with \S+ on top of the stack`)

// leakSummary is goleak's report on one line: each goroutine's state, the
// function on top of its stack and the one that started it (the full
// stacks are in Run.Leaked).
func leakSummary(leaked string) string {
	var parts []string
	for _, line := range strings.Split(leaked, "\n") {
		if h := goroutineHeader.FindString(line); h != "" {
			parts = append(parts, h)
		} else if f, ok := strings.CutPrefix(line, "created by "); ok && len(parts) > 0 {
			f, _, _ = strings.Cut(f, " in goroutine ")
			parts[len(parts)-1] += ", started by " + f
		}
	}
	if len(parts) == 0 {
		return textquote.Text(leaked)
	}
	return textquote.Text(strings.Join(parts, "; "))
}

// deadlockSummary says what the tasks of a deadlocked loop wait on.
func deadlockSummary(err error) string {
	var d *asyncio.DeadlockError
	if !errors.As(err, &d) || d.Snapshot == nil {
		return fmt.Sprint(err)
	}
	var parts []string
	for _, ti := range d.Snapshot.Tasks {
		parts = append(parts, textquote.Text(ti.Name)+" waits on "+ti.Awaits)
	}
	return "the loop would block forever: " + strings.Join(parts, ", ")
}

// Report is the result of Check.
type Report struct {
	// Points is the number of suspension points of the first run.
	Points int
	// Runs are the first run (Point 0) and one run per point.
	Runs []Run
	// Skipped counts the points beyond MaxRuns.
	Skipped int
}

// OK reports whether no run has a problem.
func (r *Report) OK() bool {
	for i := range r.Runs {
		if len(r.Runs[i].Problems()) > 0 {
			return false
		}
	}
	return true
}

// String lists every run, one line each, problems after a colon.
func (r *Report) String() string {
	var b strings.Builder
	n := 0
	for i := range r.Runs {
		if len(r.Runs[i].Problems()) > 0 {
			n++
		}
	}
	fmt.Fprintf(&b, "cancelcheck: %d suspension points, %d runs, %d with problems", r.Points, len(r.Runs), n)
	if r.Skipped > 0 {
		fmt.Fprintf(&b, ", %d points skipped (MaxRuns)", r.Skipped)
	}
	b.WriteString("\n")
	for i := range r.Runs {
		run := &r.Runs[i]
		switch {
		case run.Point == 0:
			fmt.Fprintf(&b, "  no cancellation: %s", run.Outcome)
		case run.Outcome == NotReached:
			fmt.Fprintf(&b, "  point %d (at %s in the first run): %s", run.Point, run.At, run.Outcome)
		default:
			fmt.Fprintf(&b, "  point %d (%s at %s): %s %s", run.Point, textquote.Text(run.Suspended), run.At, textquote.Text(run.Task), run.Outcome)
		}
		if p := run.Problems(); len(p) > 0 {
			b.WriteString(": PROBLEM: " + strings.Join(p, "; "))
		}
		for _, note := range run.Notes {
			b.WriteString(" (" + note + ")")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Require runs Check and fails tb with the report if any run has a
// problem; when it passes with points skipped (MaxRuns), it logs how many,
// as those points were not tested. It returns the report. A nil tb panics
// with a *asyncio.ValueError.
func Require(tb testing.TB, fn Func, opts ...Option) *Report {
	if tb == nil {
		panic(&asyncio.ValueError{Msg: "cancelcheck.Require: nil testing.TB"})
	}
	tb.Helper()
	r := Check(fn, opts...)
	switch {
	case !r.OK():
		tb.Error(r.String())
	case r.Skipped > 0:
		tb.Logf("cancelcheck: %d of %d suspension points not tested (MaxRuns)", r.Skipped, r.Points)
	}
	return r
}

// Check runs fn once without cancellation to count its suspension points,
// then once per point with a cancellation injected there (see the package
// documentation). A nil fn, or a nil option, panics with a
// *asyncio.ValueError.
func Check(fn Func, opts ...Option) *Report {
	if fn == nil {
		panic(&asyncio.ValueError{Msg: "cancelcheck.Check: nil coroutine"})
	}
	c := &config{maxRuns: 1000}
	for i, o := range opts {
		if o == nil {
			panic(&asyncio.ValueError{Msg: fmt.Sprintf("cancelcheck.Check: nil Option at index %d", i)})
		}
		o(c)
	}
	rep := &Report{}
	base, sites, total := c.run(fn, 0, firstRunSuspensions)
	rep.Points = len(sites)
	rep.Runs = append(rep.Runs, base)
	if base.Outcome == NotEnded {
		return rep // no count of points to go by
	}
	for k := 1; k <= len(sites); k++ {
		if k > c.maxRuns {
			rep.Skipped = len(sites) - c.maxRuns
			break
		}
		run, _, _ := c.run(fn, k, 2*total+extraSuspensions)
		switch {
		case run.Outcome == NotReached:
			run.At = sites[k-1]
		case run.At != sites[k-1]:
			run.Notes = append(run.Notes, "in the first run this point was at "+sites[k-1])
		}
		rep.Runs = append(rep.Runs, run)
	}
	return rep
}

// The bounds past which a run is stopped as one that does not end: a
// coroutine looping until cancelled, or one that ignores the cancellation
// and goes on, would otherwise keep Check waiting forever, on virtual
// time. The first run may have firstRunPoints suspension points and
// firstRunSuspensions suspensions of all its tasks (a ticking task may
// suspend far more often than the coroutine's own points); a cancellation
// run may suspend twice as often as the first run, and extraSuspensions
// more times.
const (
	firstRunPoints      = 100000
	firstRunSuspensions = 1000000
	extraSuspensions    = 10000
)

// run runs fn once on a fresh loop, cancelling the task that reaches
// suspension point inject (0: none), and stopping the loop after limit
// suspensions. It returns the run, for the first run every point's
// location, and the number of suspensions of all tasks.
func (c *config) run(fn Func, inject, limit int) (run Run, sites []string, total int) {
	run.Point = inject
	ignore := goleak.IgnoreCurrent()
	r := asyncio.NewRunner(append([]asyncio.LoopOption{asyncio.WithVirtualTime(), asyncio.WithTaskStacks()}, c.loopOpts...)...)
	loop := r.Loop()
	// The tap sees every report, also under a handler the coroutine sets
	// (ported programs set one in main); the quiet handler keeps the
	// default one from logging what the run reports anyway.
	loop.SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) {})
	hooks.SetExceptionTap(loop, func(ctx asyncio.ExceptionContext) {
		var sw *asyncio.SwallowedCancelError
		var pe *asyncio.PanicError
		switch {
		case errors.As(ctx.Err, &sw):
			run.Reported = append(run.Reported, textquote.Text(sw.Error()))
		case errors.As(ctx.Err, &pe) && ctx.Task == nil:
			run.Reported = append(run.Reported, textquote.Text(ctx.Message)+": "+textquote.Text(pe.Error()))
		}
	})
	w := &Watch{}
	var main, victim *asyncio.T
	points, stopping := 0, false
	stop := func() {
		stopping = true
		loop.Stop()
	}
	hooks.SetSuspendHook(loop, func(t *asyncio.T, where func() string) {
		if stopping {
			return
		}
		if total++; total > limit {
			stop()
			return
		}
		if !c.allTasks && t != main {
			return
		}
		points++
		switch {
		case inject == 0 && len(sites) == firstRunPoints:
			stop()
		case inject == 0:
			sites = append(sites, where())
		case points == inject:
			victim = t
			if c.cancelMain {
				victim = main
			}
			run.At, run.Suspended, run.Task = where(), t.Name(), victim.Name()
			victim.Cancel(fmt.Sprintf("cancelcheck: point %d", inject))
		}
	})
	_, mainErr := asyncio.RunWith(r, func(t *asyncio.T) (struct{}, error) {
		main, w.t = t, t
		return struct{}{}, fn(t, w)
	}, asyncio.WithName("main"))
	hooks.SetSuspendHook[asyncio.Loop, asyncio.T](loop, nil)
	stopped := stopping && main != nil && !main.Done()

	var ded *asyncio.DeadlockError
	switch {
	case stopped:
		run.Outcome = NotEnded
	case errors.As(mainErr, &ded):
		run.Outcome, run.Err = Deadlock, mainErr
	case inject == 0:
		run.Outcome, run.Err = Completed, mainErr
		if mainErr != nil {
			run.Outcome = Failed
		}
	case victim == nil:
		run.Outcome = NotReached
	default:
		run.Outcome, run.Err = outcome(victim, mainErr, victim == main)
		if victim != main {
			run.MainErr = mainErr
		}
	}
	// Left tasks, with what they wait on and where.
	for _, ti := range asyncio.Snapshot(loop, asyncio.SnapshotOptions{MaxTasks: -1}).Tasks {
		desc := textquote.Text(ti.Name)
		if ti.State == "waiting" {
			desc += " (waiting on " + textquote.Text(ti.Awaits)
			if st := ti.Stack; len(st) > 1 && isLibraryCall(st[0].Function) {
				desc += " at " + st[1].String() // the caller of Sleep, Get...
			} else if len(st) > 0 {
				desc += " at " + st[0].String()
			}
			desc += ")"
		}
		run.LeftTasks = append(run.LeftTasks, desc)
	}
	// Cancel what is left and let it finish, then check the primitives
	// (not after a deadlock: the tasks deadlocked hold what they hold).
	// A left task that ignores the cancellation and goes on awaiting
	// would keep the cleanup (and the runner's Close) waiting forever, on
	// virtual time without end: after cleanupSuspensions suspensions of
	// the left tasks the cleanup stops waiting; the loop is then closed
	// without running them again (Close unwinds them), as it is when they
	// ignore the cancellation waiting for something that never comes.
	var left []*asyncio.T
	{
		var cleanup *asyncio.T
		var allDone *asyncio.Future[struct{}] // or given up on
		suspensions, gaveUp := 0, false
		hooks.SetSuspendHook(loop, func(t *asyncio.T, _ func() string) {
			if t == cleanup || gaveUp {
				return
			}
			if suspensions++; suspensions > cleanupSuspensions {
				gaveUp = true
				_ = allDone.SetResult(struct{}{})
			}
		})
		_, _ = asyncio.RunWith(r, func(t *asyncio.T) (struct{}, error) {
			cleanup = t
			allDone = asyncio.NewFuture[struct{}](t)
			left = slices.DeleteFunc(asyncio.AllTasks(t), func(x *asyncio.T) bool { return x == t })
			n := len(left)
			for _, x := range left {
				x.Cancel()
				x.AddDoneCallback(func() {
					if n--; n == 0 && !allDone.Done() {
						_ = allDone.SetResult(struct{}{})
					}
				})
			}
			if n > 0 {
				//asynciovet:ignore droppedcancel nothing cancels this cleanup task
				_, _ = allDone.Await(t)
			}
			return struct{}{}, nil
		})
		_, _ = asyncio.RunWith(r, func(t *asyncio.T) (struct{}, error) {
			for _, check := range w.checks {
				if run.Outcome == Deadlock {
					break
				}
				if p := check(t); p != "" {
					run.Held = append(run.Held, p)
				}
			}
			if slices.ContainsFunc(left, func(x *asyncio.T) bool { return !x.Done() }) {
				// Before the loop is closed under the left tasks: the
				// runner's Close would do it, after waiting for them.
				//asynciovet:ignore droppedcancel nothing cancels this checking task, and its error is the runner's Close's to report
				_ = asyncio.ShutdownDefaultExecutor(t)
			}
			return struct{}{}, nil
		})
		hooks.SetSuspendHook[asyncio.Loop, asyncio.T](loop, nil)
	}
	for _, x := range left {
		if !x.Done() {
			run.IgnoredCancel = append(run.IgnoredCancel, textquote.Text(x.Name()))
		}
	}
	if len(run.IgnoredCancel) > 0 {
		_ = loop.Close()
	}
	_ = r.Close()
	if err := goleak.Find(ignore); err != nil {
		run.Leaked = err.Error()
	}
	return run, sites, total
}

// cleanupSuspensions bounds the suspensions of the left tasks while Check
// waits for them to end after cancelling them.
const cleanupSuspensions = 10000

// isLibraryCall reports whether fn is a function of package asyncio or aio
// (the first frame of a task's stack is the library call it waits in).
func isLibraryCall(fn string) bool {
	return strings.HasPrefix(fn, "github.com/go-asyncio/asyncio.") || strings.HasPrefix(fn, "github.com/go-asyncio/asyncio/aio.")
}

// outcome classifies how the cancelled task ended.
func outcome(t *asyncio.T, mainErr error, isMain bool) (Outcome, error) {
	err := mainErr
	if !isMain {
		if !t.Done() {
			return StillRunning, nil
		}
		err = t.Err()
	}
	switch {
	case t.Cancelled() || asyncio.IsCancelled(err):
		return Cancelled, err
	case err != nil:
		return Failed, err
	case t.Cancelling() == 0:
		return Swallowed, nil
	}
	return SwallowedNoUncancel, nil
}
