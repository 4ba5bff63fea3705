package asyncio

// Who cancelled whom (the loop's cancel log) and, in debug mode, the
// swallowed-cancellation detector.

import (
	"fmt"
	"time"
)

// cancelLogSize is how many cancel requests a loop remembers (the most
// recent ones), for every task together.
const cancelLogSize = 1024

// cancelRecord is one cancel request in the loop's log: compact, and
// formatted only when a snapshot asks (the hot path of a mass
// cancellation allocates nothing for it).
type cancelRecord struct {
	target *T
	by     *T // nil: a callback
	byName string
	msg    string
	at     time.Duration
	frame  *Frame
}

// ---- who cancelled whom

// CancelRequest is one Cancel of a task, as recorded for dumps.
type CancelRequest struct {
	// By is who asked: "task 'name' (0x...)", or "callback" when no task
	// was running (a timer, a done callback, another goroutine through
	// CallSoonThreadsafe).
	By string `json:"by"`
	// Msg is the cancel message ("" for none).
	Msg string `json:"msg,omitempty"`
	// At is the loop's time of the request: exact on virtual time and in
	// debug mode, else the loop's coarse clock (see TaskInfo.Waiting).
	At time.Duration `json:"at_ns"`
	// Frame is, in debug mode, the Go frame that asked: the first frame
	// outside this package, or the package's own function that decided
	// (a timeout's timer, a TaskGroup abort).
	Frame *Frame `json:"frame,omitempty"`
}

// noteCancelRequest records a cancel request of t (called by T.cancel
// after counting it) in the loop's log: a ring of the last cancelLogSize
// requests, allocated at the first one. The time is the loop's coarse
// clock (exact on virtual time and in debug mode), so recording reads no
// clock.
func (t *T) noteCancelRequest(msg string) {
	l := t.fut.loop
	if l.cancelLog == nil {
		l.cancelLog = make([]cancelRecord, cancelLogSize)
	}
	r := &l.cancelLog[l.cancelLogNext%cancelLogSize]
	l.cancelLogNext++
	*r = cancelRecord{target: t, msg: msg, at: l.coarseTime()}
	if c := l.current; c != nil {
		r.by, r.byName = c, c.name // a default name is formatted on demand
	}
	if l.debug {
		r.at = l.Time()
		if f, ok := requesterFrame(callers(2)); ok {
			r.frame = &f
		}
	}
	if l.obs != nil {
		l.obs.cancelRequested(t, msg)
	}
}

// cancelRequestsByTask groups the loop's cancel log by task, oldest first.
func (l *Loop) cancelRequestsByTask() map[*T][]CancelRequest {
	m := map[*T][]CancelRequest{}
	n := l.cancelLogNext
	start := uint64(0)
	if n > cancelLogSize {
		start = n - cancelLogSize
	}
	for i := start; i < n; i++ {
		r := &l.cancelLog[i%cancelLogSize]
		req := CancelRequest{By: "callback", Msg: r.msg, At: r.at, Frame: r.frame}
		if r.by != nil {
			name := r.byName
			if name == "" {
				name = r.by.Name()
			}
			req.By = "task " + pyQuote(name) + " (" + taskID(r.by) + ")"
		}
		m[r.target] = append(m[r.target], req)
	}
	return m
}

// ---- swallowed cancellations (debug mode)

// checkSwallowedAtAwait reports a task suspending at the very await that
// returned it a CancelledError it has neither returned nor withdrawn (a
// loop that ignores the error and waits again). Other awaits after a
// cancellation, such as cleanup before returning the error, are not
// reported; the task's end is checked in diagFinished.
func (t *T) checkSwallowedAtAwait() {
	d := t.diag
	if t.numCancelRequested < d.deliveredCount {
		d.delivered = false // Uncancel: deliberately swallowed
		return
	}
	pcs := callers(1)
	if d.laterPCs == nil {
		d.laterPCs = pcs
	}
	if sameAwaitSite(pcs, d.deliveredPCs) {
		d.laterPCs = pcs
		t.reportSwallowed("awaited again at the same place")
		d.delivered = false
	}
}

// cancelHandled tells the debug-mode detector that library code keeps
// waiting after a CancelledError on purpose (it returns it later, or
// withdraws it): TaskGroup's exit, Condition.Wait re-acquiring its lock.
func (t *T) cancelHandled() {
	if t.diag != nil {
		t.diag.delivered = false
	}
}

// SwallowedCancelError is the Err of the exception-handler report, in
// debug mode, of a task that swallowed a cancellation: an await returned
// it a CancelledError while it had cancel requests pending, and it then
// awaited again at the same place (a loop that ignores the error), or
// returned a nil error, without returning the CancelledError or calling
// Uncancel. Awaits elsewhere in between (cleanup before returning the
// error) are not reported.
type SwallowedCancelError struct {
	// Task is the task's name.
	Task string
	// DeliveredAt is the await that returned the CancelledError.
	DeliveredAt Frame
	// Then is what happened next: "awaited again at the same place" or
	// "finished with a nil error".
	Then string
	// ThenAt is the await where it waited again (zero when it ended).
	ThenAt Frame
}

// Error implements the error interface, naming both locations.
func (e *SwallowedCancelError) Error() string {
	s := fmt.Sprintf("asyncio: task %q swallowed a cancellation: the CancelledError returned at %s was not returned and Uncancel was not called; the task then %s",
		e.Task, e.DeliveredAt, e.Then)
	if e.ThenAt.Function != "" {
		s += " (" + e.ThenAt.String() + ")"
	}
	return s
}

func (t *T) reportSwallowed(then string) {
	d := t.diag
	e := &SwallowedCancelError{Task: t.Name(), Then: then}
	e.DeliveredAt, _ = userFrame(d.deliveredPCs)
	if then != "awaited again at the same place" {
		d.laterPCs = nil
	}
	if d.laterPCs != nil {
		e.ThenAt, _ = userFrame(d.laterPCs)
	}
	t.fut.loop.CallExceptionHandler(ExceptionContext{
		Message: "Task " + t.String() + " swallowed a cancellation",
		Err:     e,
		Task:    t,
	})
}
