package asyncio

// Go's own tools see tasks: pprof labels (WithTaskLabels, debug mode) and
// runtime/trace (while tracing is on, whatever the options).
//
// Under runtime/trace each task is a trace task of type "asyncio.Task"
// (nested in the trace task of the task that created it), logging its name
// under "asyncio.name"; each step is a region "asyncio.step" on the task's
// goroutine; cancel requests and deliveries are log events
// "asyncio.cancel" and "asyncio.cancel.delivered". `go tool trace` then
// shows every asyncio task, its steps and who cancelled it. Tasks started
// before tracing began get their trace task at their next step, and so do
// tasks alive when tracing stops and starts again: a trace task belongs to
// one trace, so the loop drops them all when it sees tracing stop. It looks
// at each iteration and setter call, so a trace stopped and started again
// between two looks (within one step or callback, or while the loop waits
// in its poll) goes unnoticed.

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/trace"
	"time"
)

// LabelTask is the pprof label key under which a task's goroutine carries
// the task's name (WithTaskLabels, debug mode): CPU and goroutine profiles
// then split by task (go tool pprof -tagfocus=asyncio.task=worker-1, or
// -tagroot=asyncio.task).
const LabelTask = "asyncio.task"

// traceObserver is the runtime/trace observer, present while tracing is
// on (startIteration notices when it starts or stops).
type traceObserver struct{ noObserver }

// taskCreated nests t's trace task in its creator's.
func (traceObserver) taskCreated(t *T) {
	if c := t.fut.loop.current; c != nil && c.diag != nil && c.diag.traceCtx != nil {
		t.diagState().traceCtx = c.diag.traceCtx // the parent, until the task starts
	}
}

func (traceObserver) taskStarted(t *T) { t.traceStepStart() }

func (traceObserver) resumed(t *T, _ error) { t.traceStepStart() }

// stepBegan logs a cancellation delivered into the step.
func (traceObserver) stepBegan(t *T, err error) {
	if err != nil && trace.IsEnabled() && IsCancelled(err) {
		if d := t.diag; d != nil && d.traceCtx != nil {
			trace.Log(d.traceCtx, "asyncio.cancel.delivered", err.Error())
		}
	}
}

func (traceObserver) stepEnded(t *T) {
	if d := t.diag; d != nil && d.traceRegion != nil {
		d.traceRegion.End()
		d.traceRegion = nil
	}
}

func (traceObserver) taskFinished(t *T, _ error) {
	if d := t.diag; d != nil && d.traceTask != nil {
		d.traceTask.End()
		d.traceTask, d.traceCtx = nil, nil
	}
}

func (traceObserver) cancelRequested(t *T, msg string) {
	if !trace.IsEnabled() {
		return
	}
	if d := t.diag; d != nil && d.traceCtx != nil {
		trace.Log(d.traceCtx, "asyncio.cancel", msg)
	}
}

// traceStopped forgets the trace tasks, contexts and regions of the
// loop's tasks: they belong to the trace that ended, and a later trace
// must see each task's trace task, with its name, made anew at its next
// step (settingsChanged, when it sees tracing stop).
func (l *Loop) traceStopped() {
	for _, t := range l.tasks {
		if d := t.diag; d != nil {
			d.traceCtx, d.traceTask, d.traceRegion = nil, nil, nil
		}
	}
}

// traceStepStart opens the trace region of a step, on the task's goroutine
// (regions belong to a goroutine); the trace task is created on first use.
func (t *T) traceStepStart() {
	if !trace.IsEnabled() {
		return
	}
	d := t.diagState()
	if d.traceTask == nil {
		parent := d.traceCtx
		if parent == nil {
			parent = context.Background()
		}
		d.traceCtx, d.traceTask = trace.NewTask(parent, "asyncio.Task")
		trace.Log(d.traceCtx, "asyncio.name", t.Name())
	}
	d.traceRegion = trace.StartRegion(d.traceCtx, "asyncio.step")
}

// traceRename logs a task's new name in its trace task, so a trace shows
// names set after the task started.
func (t *T) traceRename() {
	if d := t.diag; d != nil && d.traceCtx != nil && d.traceTask != nil && trace.IsEnabled() {
		trace.Log(d.traceCtx, "asyncio.name", t.name)
	}
}

// warnSlowStep is debug mode's slow-step warning (DEBUG-2). No stack: at
// the end of the step it would show only the library's frames; the
// watchdog reports a slow step's stack while it is still running.
func (l *Loop) warnSlowStep(t *T, dt time.Duration) {
	slog.Warn(fmt.Sprintf("Executing %s took %.3f seconds", t, dt.Seconds()))
}

// warnSlowCallback is the same warning for a callback.
func (l *Loop) warnSlowCallback(fn func(), dt time.Duration) {
	slog.Warn(fmt.Sprintf("Executing %s took %.3f seconds", funcName(fn), dt.Seconds()))
}
