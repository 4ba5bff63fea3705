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
// before tracing began get their trace task at their next step.

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
