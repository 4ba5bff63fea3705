package asyncio

// What the diagnostics record about a task, and the hooks the hot paths
// call when l.diagOn.

import (
	"context"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
	"github.com/go-asyncio/asyncio/internal/hooks"
)

// diagFlags are the diagnostics switched on for a loop.
type diagFlags uint8

const (
	diagDebug       diagFlags = 1 << iota // debug mode
	diagStacks                            // WithTaskStacks
	diagLabels                            // WithTaskLabels
	diagTiming                            // WithStepTiming
	diagSuspendHook                       // the cancellation tester's hook
)

// refreshDiag recomputes diagFlags' debug bit and diagOn after a change.
func (l *Loop) refreshDiag() {
	if l.debug {
		l.diagFlags |= diagDebug
	} else {
		l.diagFlags &^= diagDebug
	}
	l.diagOn = l.diagFlags != 0 || trace.IsEnabled()
}

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

// ---- hooks called from the hot paths when l.diagOn

// diagTaskCreated records t's creator (and, while tracing, the trace task
// its own is nested in).
func (l *Loop) diagTaskCreated(t *T) {
	c := l.current
	if c == nil && l.diagFlags == 0 {
		return // only tracing, from a callback: nothing to record
	}
	d := t.diagState()
	if c != nil {
		d.creator = c.Name() + " (" + taskID(c) + ")"
		if c.diag != nil && c.diag.traceCtx != nil {
			d.traceCtx = c.diag.traceCtx // the parent, until the task starts
		}
	}
}

// diagStarted runs on t's own goroutine at its first step.
func (t *T) diagStarted() {
	l := t.fut.loop
	if l.diagFlags&(diagDebug|diagStacks|diagLabels) != 0 {
		d := t.diagState()
		d.goroutine = gid.Current()
		if l.diagFlags&(diagDebug|diagLabels) != 0 {
			pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(LabelTask, t.Name())))
		}
	}
	t.traceStepStart()
}

// diagBeginStep is the loop's side of a step's start: timing, and a
// cancellation delivered into the step.
func (l *Loop) diagBeginStep(t *T, err error) {
	if l.diagFlags != 0 {
		l.stepStart = time.Now()
	}
	if err != nil && trace.IsEnabled() && IsCancelled(err) {
		if d := t.diag; d != nil && d.traceCtx != nil {
			trace.Log(d.traceCtx, "asyncio.cancel.delivered", err.Error())
		}
	}
}

// diagSuspending runs on t's goroutine as an await suspends it.
func (t *T) diagSuspending() {
	l := t.fut.loop
	if l.debug && t.diag != nil && t.diag.delivered {
		t.checkSwallowedAtAwait()
	}
	if l.metrics.suspendHook != nil {
		l.metrics.suspendHook(t)
	}
}

// diagResumed runs on t's goroutine when an await returns err.
func (t *T) diagResumed(err error) {
	t.traceStepStart()
	if err != nil && t.fut.loop.debug && t.numCancelRequested > 0 && IsCancelled(err) {
		d := t.diagState()
		d.delivered = true
		d.deliveredCount = t.numCancelRequested
		d.deliveredPCs = callers(1)
		d.laterPCs = nil
	}
}

// diagEndStep is the end of a step: timing, the debug-mode slow-step
// warning, the trace region.
func (l *Loop) diagEndStep(t *T) {
	if !l.stepStart.IsZero() {
		dt := time.Since(l.stepStart)
		l.recordStep(dt)
		if l.debug && dt >= l.slowCallback {
			l.warnSlowStep(t, dt)
		}
		l.stepStart = time.Time{}
	}
	if d := t.diag; d != nil && d.traceRegion != nil {
		d.traceRegion.End()
		d.traceRegion = nil
	}
}

// diagFinished runs when t's function has returned err and t is done.
func (t *T) diagFinished(err error) {
	d := t.diag
	if d.traceTask != nil {
		d.traceTask.End()
		d.traceTask, d.traceCtx = nil, nil
	}
	// A task failing with another error has not gone on as if nothing
	// happened (a TaskGroup turns a cancellation into its ExceptionGroup):
	// only a normal end is a swallowed cancellation.
	if d.delivered && err == nil && t.numCancelRequested >= d.deliveredCount && t.fut.loop.debug {
		t.reportSwallowed("finished with a nil error")
	}
	d.delivered = false
}

func init() {
	hooks.SetSuspendHook = func(loop any, fn func(task any, where func() string)) {
		l := loop.(*Loop)
		if fn == nil {
			l.metrics.suspendHook = nil
			l.diagFlags &^= diagSuspendHook
		} else {
			l.metrics.suspendHook = func(t *T) {
				fn(t, func() string {
					f, _ := userFrame(callers(4))
					return f.String()
				})
			}
			l.diagFlags |= diagSuspendHook
		}
		l.refreshDiag()
	}
}
