package asyncio

// The observer seam: everything that watches the loop's tasks (runtime/trace
// regions, pprof labels, stack recording, step timing and slow-step
// warnings, the swallowed-cancellation check, the cancellation tester) is an
// observer, told when a task is created, a step begins, the task suspends
// or resumes, a step ends, the task finishes, and when a cancel is
// requested (Trio's instruments, net/http's httptrace). The loop holds them
// in one field, l.obs, nil when nothing observes: then each of those
// points on the hot path costs one nil check. settingsChanged derives
// l.obs (and everything else that follows from the settings) in one place.

import (
	"context"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
	"github.com/go-asyncio/asyncio/internal/hooks"
)

// taskDiag is what the diagnostics record about a task. It is allocated
// by the first thing that has something to record.
type taskDiag struct {
	goroutine uint64 // 0: not recorded (diagnostics were off at its first step)
	creator   string // "name (0x...)" of the task that created it; "" from a callback

	// runtime/trace: the task, its context (for regions and logs) and the
	// region of the step in progress.
	traceCtx    context.Context
	traceTask   *trace.Task
	traceRegion *trace.Region

	// Debug mode: a CancelledError returned by an await while the task
	// had cancel requests pending, not yet returned or withdrawn.
	delivered      bool
	deliveredCount int32     // t.numCancelRequested at the delivery
	deliveredPCs   []uintptr // the await that returned it
	laterPCs       []uintptr // the first await after it
}

func (t *T) diagState() *taskDiag {
	if t.diag == nil {
		t.diag = &taskDiag{}
	}
	return t.diag
}

// observer is told what happens to a loop's tasks. Each method runs on the
// loop (the goroutine holding it), at the point its name says; the
// *Task methods that run on the task's own goroutine say so.
type observer interface {
	// taskCreated: CreateTask made t (l.current is its creator, or nil).
	taskCreated(t *T)
	// taskStarted: t's first step starts, on t's goroutine.
	taskStarted(t *T)
	// stepBegan: the loop is about to run a step of t, which throws err
	// in (nil, an awaited future's error, a cancellation); an eager first
	// step inside CreateTask begins with err nil. Steps nest only that way.
	stepBegan(t *T, err error)
	// suspending: t suspends at an await, on t's goroutine.
	suspending(t *T)
	// resumed: an await of t returns err, on t's goroutine.
	resumed(t *T, err error)
	// stepEnded: t's step has ended (it suspended or finished).
	stepEnded(t *T)
	// taskFinished: t's function returned err and t is done.
	taskFinished(t *T, err error)
	// cancelRequested: t.Cancel(msg) was counted.
	cancelRequested(t *T, msg string)
	// callbackBegan and callbackEnded bracket a callback the loop runs
	// (also when it panicked: then callbackEnded runs from the recover).
	callbackBegan()
	callbackEnded(fn func())
}

// noObserver implements observer with methods that do nothing; an
// observer embeds it and overrides what it watches.
type noObserver struct{}

func (noObserver) taskCreated(*T)             {}
func (noObserver) taskStarted(*T)             {}
func (noObserver) stepBegan(*T, error)        {}
func (noObserver) suspending(*T)              {}
func (noObserver) resumed(*T, error)          {}
func (noObserver) stepEnded(*T)               {}
func (noObserver) taskFinished(*T, error)     {}
func (noObserver) cancelRequested(*T, string) {}
func (noObserver) callbackBegan()             {}
func (noObserver) callbackEnded(func())       {}

// observers tells each of several observers, in order.
type observers []observer

func (os observers) taskCreated(t *T) {
	for _, o := range os {
		o.taskCreated(t)
	}
}
func (os observers) taskStarted(t *T) {
	for _, o := range os {
		o.taskStarted(t)
	}
}
func (os observers) stepBegan(t *T, err error) {
	for _, o := range os {
		o.stepBegan(t, err)
	}
}
func (os observers) suspending(t *T) {
	for _, o := range os {
		o.suspending(t)
	}
}
func (os observers) resumed(t *T, err error) {
	for _, o := range os {
		o.resumed(t, err)
	}
}
func (os observers) stepEnded(t *T) {
	for _, o := range os {
		o.stepEnded(t)
	}
}
func (os observers) taskFinished(t *T, err error) {
	for _, o := range os {
		o.taskFinished(t, err)
	}
}
func (os observers) cancelRequested(t *T, msg string) {
	for _, o := range os {
		o.cancelRequested(t, msg)
	}
}
func (os observers) callbackBegan() {
	for _, o := range os {
		o.callbackBegan()
	}
}
func (os observers) callbackEnded(fn func()) {
	for _, o := range os {
		o.callbackEnded(fn)
	}
}

// diagSettings are the loop's diagnostic settings (options and setters);
// settingsChanged derives the observers from them and debug mode.
type diagSettings struct {
	stacks, labels, timing bool // WithTaskStacks, WithTaskLabels, WithStepTiming
	// tester is the cancellation tester's suspend hook (internal/hooks).
	tester func(t *T, where func() string)
	// tracing is whether runtime/trace was on when the observers were
	// last derived: startIteration compares it with trace.IsEnabled().
	tracing bool
	// timer is the step-timing observer while one is derived, nil
	// otherwise: it keeps the starts of the steps in progress, so it is
	// kept (not rebuilt) across changes that leave timing on.
	timer *timingObserver
}

// settingsChanged derives, in one place, everything that follows from the
// loop's settings: the foreign-goroutine check's mode, the watchdog's
// threshold, and the observers. Every setter and NewLoop call it, often
// from inside a step or callback, so an observer that stays on keeps the
// state it holds about the step in progress (the timing observer is the
// one with such state; the others keep theirs in the tasks), and state
// that belongs to a setting switched off is dropped with it.
func (l *Loop) settingsChanged() {
	l.checkAll = checkEveryMode || l.debug
	l.updateWatchdog()
	s := &l.diagSet
	tracing := trace.IsEnabled()
	if s.tracing && !tracing {
		l.traceStopped()
	}
	s.tracing = tracing
	var os observers
	if l.debug || s.stacks || s.labels {
		os = append(os, stackObserver{})
	}
	if l.debug || s.labels {
		os = append(os, labelObserver{})
	}
	if l.debug || s.stacks || s.labels || s.timing {
		if s.timer == nil {
			s.timer = &timingObserver{l: l}
		}
		os = append(os, s.timer)
	} else {
		s.timer = nil // the steps in progress now are not timed
	}
	if l.debug {
		os = append(os, swallowObserver{})
	}
	if s.tracing {
		os = append(os, traceObserver{})
	}
	if s.tester != nil {
		os = append(os, testerObserver{fn: s.tester})
	}
	switch len(os) {
	case 0:
		l.obs = nil
	case 1:
		l.obs = os[0]
	default:
		l.obs = os
	}
}

// stackObserver records each task's goroutine at its first step, so that
// snapshots and call graphs can show where it waits, and its creator
// (WithTaskStacks, WithTaskLabels, debug mode).
type stackObserver struct{ noObserver }

func (stackObserver) taskCreated(t *T) {
	if c := t.fut.loop.current; c != nil {
		t.diagState().creator = c.Name() + " (" + taskID(c) + ")"
	}
}

func (stackObserver) taskStarted(t *T) { t.diagState().goroutine = gid.Current() }

// labelObserver sets the pprof label LabelTask on each task's goroutine
// (WithTaskLabels, debug mode).
type labelObserver struct{ noObserver }

func (labelObserver) taskStarted(t *T) {
	t.labelled() // the goroutine is not pooled: its labels are t's
	t.fut.loop.labelledEver = true
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(LabelTask, t.Name())))
}

// timingObserver times steps and callbacks for Stats, and warns about slow
// ones in debug mode (DEBUG-2). starts holds the start of the step in
// progress and, under it, of the steps an eager first step interrupted.
type timingObserver struct {
	noObserver
	l        *Loop
	starts   []time.Time
	callback time.Time
}

func (o *timingObserver) stepBegan(*T, error) { o.starts = append(o.starts, time.Now()) }

func (o *timingObserver) stepEnded(t *T) {
	n := len(o.starts)
	if n == 0 {
		return // the observer came after the step began
	}
	dt := time.Since(o.starts[n-1])
	o.starts = o.starts[:n-1]
	l := o.l
	l.recordStep(dt)
	if l.debug && dt >= l.slowCallback {
		l.warnSlowStep(t, dt)
	}
}

func (o *timingObserver) callbackBegan() { o.callback = time.Now() }

func (o *timingObserver) callbackEnded(fn func()) {
	if o.callback.IsZero() {
		return
	}
	dt := time.Since(o.callback)
	o.callback = time.Time{}
	l := o.l
	l.metrics.callbackTime += dt
	if l.debug && dt >= l.slowCallback {
		l.warnSlowCallback(fn, dt)
	}
}

// swallowObserver is debug mode's swallowed-cancellation check
// (diag_cancel.go).
type swallowObserver struct{ noObserver }

func (swallowObserver) suspending(t *T) {
	if t.diag != nil && t.diag.delivered {
		t.checkSwallowedAtAwait()
	}
}

func (swallowObserver) resumed(t *T, err error) {
	if err != nil && t.numCancelRequested > 0 && IsCancelled(err) {
		d := t.diagState()
		d.delivered = true
		d.deliveredCount = t.numCancelRequested
		d.deliveredPCs = callers(1) // park and the await under it
		d.laterPCs = nil
	}
}

func (swallowObserver) taskFinished(t *T, err error) {
	d := t.diag
	if d == nil {
		return
	}
	// A task failing with another error has not gone on as if nothing
	// happened (a TaskGroup turns a cancellation into its ExceptionGroup):
	// only a normal end is a swallowed cancellation.
	if d.delivered && err == nil && t.numCancelRequested >= d.deliveredCount {
		t.reportSwallowed("finished with a nil error")
	}
	d.delivered = false
}

// testerObserver runs the cancellation tester's hook each time a task
// suspends, on the task's goroutine.
type testerObserver struct {
	noObserver
	fn func(t *T, where func() string)
}

func (o testerObserver) suspending(t *T) {
	o.fn(t, func() string {
		f, _ := userFrame(callers(3))
		return f.String()
	})
}

func init() {
	hooks.Register(func(l *Loop, fn func(t *T, where func() string)) {
		l.diagSet.tester = fn
		l.settingsChanged()
	})
}
