package asyncio

// Seeing inside a loop: what each task records for diagnostics, and the
// snapshot of every task (ps.go renders it; callgraph.go builds call graphs
// from the same edges).
//
// What is free, always on: a future's kind (a byte in padding), the
// awaited-by edges of combinators (a pointer in their done-callback
// registrations), the coarse clock a task reads when it suspends, and one
// record per cancel request (an allocation per cancelled task).
//
// What costs, only when asked (Loop.diagOn, one flag on the hot paths):
// the goroutine of each task, recorded at its first step, so a snapshot can
// show the line each suspended task waits on (WithTaskStacks, debug mode);
// pprof labels (WithTaskLabels); runtime/trace tasks and regions (while
// tracing); step timing (WithStepTiming); the requesting Go frame of each
// cancel request and swallowed-cancellation reports (debug mode).

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-asyncio/asyncio/internal/gid"
	"io"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/go-asyncio/asyncio/internal/hooks"
)

// futureKind says what a future is for, so a dump can say what a task
// awaits without a stack.
type futureKind uint8

const (
	kindPlain futureKind = iota
	kindSleep
	kindGather
	kindShield
	kindWait
	kindAsCompleted
	kindCancelWait
	kindTaskGroup
	kindLock
	kindEvent
	kindCondition
	kindSemaphore
	kindQueueGet
	kindQueuePut
	kindExecutor
	kindCrossCall
)

var kindNames = [...]string{
	kindPlain:       "future",
	kindSleep:       "sleep",
	kindGather:      "gather",
	kindShield:      "shield",
	kindWait:        "wait",
	kindAsCompleted: "as_completed",
	kindCancelWait:  "cancel-and-wait",
	kindTaskGroup:   "taskgroup",
	kindLock:        "Lock.Acquire",
	kindEvent:       "Event.Wait",
	kindCondition:   "Condition.Wait",
	kindSemaphore:   "Semaphore.Acquire",
	kindQueueGet:    "Queue.Get",
	kindQueuePut:    "Queue.Put",
	kindExecutor:    "executor",
	kindCrossCall:   "cross-loop call",
}

func (k futureKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "future"
}

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

// taskID formats a task's identity as asyncio's tools do: its address.
func taskID(t *T) string { return fmt.Sprintf("%#x", uintptrOf(t)) }

func futureID(f *futureCore) string { return fmt.Sprintf("%#x", uintptrOf(f)) }

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
	if l.diagOn && trace.IsEnabled() {
		if d := t.diag; d != nil && d.traceCtx != nil {
			trace.Log(d.traceCtx, "asyncio.cancel", msg)
		}
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
			req.By = "task '" + name + "' (" + taskID(r.by) + ")"
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

// ---- frames

// Frame is one Go frame of a call stack.
type Frame struct {
	Function string `json:"function"` // package-qualified, e.g. "main.worker"
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// String formats the frame as "function file:line".
func (f Frame) String() string {
	if f.Function == "" {
		return "?"
	}
	return fmt.Sprintf("%s %s:%d", shortFunc(f.Function), f.File, f.Line)
}

// shortFunc drops the import path before the package name:
// "github.com/x/y.(*T).f" -> "y.(*T).f".
func shortFunc(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	return fn[slash+1:]
}

// libDir is the directory of this package's sources; frames in it, or in
// the module's other library packages, are the library's (test files
// excepted: they are users).
var libDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		return file[:i]
	}
	return file
}()

var libSubdirs = []string{"/aio", "/cancelcheck", "/debug/", "/internal/"}

// isLibFrame reports whether a frame belongs to the library or to the Go
// runtime machinery under a task (runtime, iter), not to user code.
func isLibFrame(f Frame) bool {
	if strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "iter.") {
		return true
	}
	if strings.HasSuffix(f.File, "_test.go") || !strings.HasPrefix(f.File, libDir) {
		return false
	}
	rest := f.File[len(libDir):]
	if strings.IndexByte(rest[1:], '/') < 0 {
		return true // the core package itself
	}
	for _, d := range libSubdirs {
		if strings.HasPrefix(rest, d) {
			return true
		}
	}
	return false
}

// callers returns the calling goroutine's PCs, skipping skip frames.
func callers(skip int) []uintptr {
	var pcs [48]uintptr
	n := runtime.Callers(skip+1, pcs[:])
	return append([]uintptr(nil), pcs[:n]...)
}

// sameAwaitSite reports whether two stacks taken inside park (as an await
// suspends, and as it returns) are the same await: the same frames from
// park's caller down.
func sameAwaitSite(a, b []uintptr) bool {
	fa, fb := belowPark(framesOf(a)), belowPark(framesOf(b))
	if len(fa) == 0 || len(fa) != len(fb) {
		return false
	}
	for i := range fa {
		if fa[i] != fb[i] {
			return false
		}
	}
	return true
}

// belowPark drops the frames down to and including (*T).park.
func belowPark(fs []Frame) []Frame {
	for i, f := range fs {
		if strings.HasSuffix(f.Function, ".(*T).park") {
			return fs[i+1:]
		}
	}
	return nil
}

func framesOf(pcs []uintptr) []Frame {
	var out []Frame
	it := runtime.CallersFrames(pcs)
	for {
		f, more := it.Next()
		out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
		if !more {
			return out
		}
	}
}

// userFrame is the innermost user frame of pcs, else the innermost frame.
func userFrame(pcs []uintptr) (Frame, bool) {
	fs := framesOf(pcs)
	for _, f := range fs {
		if !isLibFrame(f) {
			return f, true
		}
	}
	if len(fs) > 0 {
		return fs[0], false
	}
	return Frame{}, false
}

// requesterFrame picks the frame that asked for a cancellation: skipping
// the cancel plumbing, the first user frame reached before the loop's own
// machinery, else the first library frame past the plumbing (the timer of
// a Timeout, a TaskGroup abort).
func requesterFrame(pcs []uintptr) (Frame, bool) {
	fs := framesOf(pcs)
	i := 0
	for i < len(fs) && isLibFrame(fs[i]) && isCancelPlumbing(fs[i].Function) {
		i++
	}
	if i == len(fs) {
		return Frame{}, false
	}
	first := fs[i]
	for ; i < len(fs); i++ {
		f := fs[i]
		if !isLibFrame(f) {
			return f, true
		}
		if isLoopMachinery(f.Function) {
			break
		}
	}
	return first, true
}

func isCancelPlumbing(fn string) bool {
	for _, s := range []string{".Cancel", ".cancel", ".cancelPlain", ".noteCancelRequest", ".callers"} {
		if strings.HasSuffix(fn, s) {
			return true
		}
	}
	return false
}

func isLoopMachinery(fn string) bool {
	for _, s := range []string{".(*Loop).runCallbacks", ".(*Loop).runReady", ".(*Loop).startIteration", ".(*Loop).runPollHook"} {
		if strings.HasSuffix(fn, s) {
			return true
		}
	}
	return false
}

// trimTaskStack turns a suspended (or running) task's goroutine stack,
// innermost frame first, into the frames a reader wants: the library call
// the user made, then the user's frames, with each run of library frames
// between them reduced to the call the user made (a TaskGroup, a
// WaitForFunc: its outermost frame), and the task harness under them
// dropped.
func trimTaskStack(fs []Frame) []Frame {
	first := -1
	last := -1
	for i, f := range fs {
		if !isLibFrame(f) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	var out []Frame
	if first > 0 && !strings.HasPrefix(fs[first-1].Function, "runtime.") {
		out = append(out, fs[first-1]) // the library call: Queue.Get, Sleep, ...
	}
	for i := first; i <= last; i++ {
		if isLibFrame(fs[i]) && isLibFrame(fs[i+1]) {
			continue // not the outermost of its run (i < last: fs[last] is the user's)
		}
		out = append(out, fs[i])
	}
	return out
}

// ---- the snapshot

// TaskInfo is one task in a LoopSnapshot.
type TaskInfo struct {
	// ID is the task's address, as asyncio's tools show id(task).
	ID   string `json:"id"`
	Name string `json:"name"`
	// State is "created" (its first step not run yet), "ready" (queued to
	// run), "running" (the task that took the snapshot) or "waiting"
	// (suspended on a future).
	State string `json:"state"`
	// Awaits describes what a waiting task awaits: "task 'name'", "sleep",
	// "gather", "Queue.Get", "Lock.Acquire", "future"...; AwaitsID is the
	// awaited task's or future's id.
	Awaits   string `json:"awaits,omitempty"`
	AwaitsID string `json:"awaits_id,omitempty"`
	// Waiting is how long a waiting task has waited (exact on virtual
	// time; otherwise the loop's coarse clock, which it reads at least
	// every 128 iterations, at every wait and every timer check).
	Waiting time.Duration `json:"waiting_ns,omitempty"`
	// Cancelling is the number of pending cancel requests (Cancelling());
	// CancelRequests are the task's requests among the last 1024 of the
	// loop, oldest first.
	Cancelling     int             `json:"cancelling,omitempty"`
	CancelRequests []CancelRequest `json:"cancel_requests,omitempty"`
	// CancelDeliveredAt is, in debug mode, the await that returned a
	// CancelledError the task has neither returned nor withdrawn yet.
	CancelDeliveredAt *Frame `json:"cancel_delivered_at,omitempty"`
	// Creator is the task that created it ("name (id)"); recorded only
	// with WithTaskStacks or in debug mode, "" when created from a callback.
	Creator string `json:"creator,omitempty"`
	// Goroutine is the task's goroutine id, and Stack where it is
	// suspended (innermost first: the library call it waits in, then the
	// user's frames), when recorded (WithTaskStacks or debug mode).
	Goroutine uint64  `json:"goroutine,omitempty"`
	Stack     []Frame `json:"stack,omitempty"`
	// AwaitedBy are the tasks waiting for this one: by awaiting it, or
	// through a combinator (Via: "gather", "shield", "wait"... the futures
	// in between) or a TaskGroup.
	AwaitedBy []Awaiter `json:"awaited_by,omitempty"`
}

// Awaiter is a task waiting on another, in TaskInfo.AwaitedBy.
type Awaiter struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Via  []string `json:"via,omitempty"`
}

// LoopSnapshot is a consistent picture of every task of a loop, taken on
// the loop in one go. Render it with WritePS and WriteTree, or as JSON.
type LoopSnapshot struct {
	// Time is the loop's clock when the snapshot was taken.
	Time time.Duration `json:"time_ns"`
	// Closed: the loop is closed; the snapshot is empty.
	Closed bool `json:"closed,omitempty"`
	// Blocked: SnapshotThreadsafe got no answer in time: the loop is
	// blocked in a callback or a task step, or not running. Nothing else
	// is filled in.
	Blocked bool `json:"blocked,omitempty"`
	// Stats are the loop's counters.
	Stats LoopStats `json:"stats"`
	// Tasks are the tasks, at most SnapshotOptions.MaxTasks of them:
	// running and ready first, then waiting ones, longest wait first.
	Tasks []TaskInfo `json:"tasks"`
	// Omitted counts the tasks left out by MaxTasks; Summary counts every
	// task by state and what it awaits ("waiting: sleep": 99000).
	Omitted int            `json:"omitted,omitempty"`
	Summary map[string]int `json:"summary,omitempty"`
	// Notes say what is missing and why (stacks not recorded, a stack dump
	// cut short).
	Notes []string `json:"notes,omitempty"`
}

// SnapshotOptions bound a snapshot.
type SnapshotOptions struct {
	// MaxTasks is the most tasks described one by one (0: 1000; < 0: no
	// limit); the others are only counted in Summary.
	MaxTasks int
}

// DefaultSnapshotTasks is SnapshotOptions.MaxTasks's default.
const DefaultSnapshotTasks = 1000

// maxStackDump caps the goroutine dump a snapshot parses for stacks.
const maxStackDump = 64 << 20

// Snapshot takes a snapshot of every task of owner's loop. Call it on the
// loop (from a task or callback, or while the loop is not running); from
// any other goroutine use Loop.SnapshotThreadsafe.
func Snapshot(owner LoopOwner, opts SnapshotOptions) *LoopSnapshot {
	return owner.ownerLoop().snapshot(opts)
}

func (l *Loop) snapshot(opts SnapshotOptions) *LoopSnapshot {
	s := &LoopSnapshot{Tasks: []TaskInfo{}}
	if l.closed {
		s.Closed = true
		return s
	}
	s.Time = l.Time()
	s.Stats = l.Stats()
	limit := opts.MaxTasks
	if limit == 0 {
		limit = DefaultSnapshotTasks
	}

	// Order: running and ready tasks first, then the longest waits.
	tasks := append([]*T(nil), l.tasks...)
	rank := func(t *T) int {
		switch taskState(l, t) {
		case "running":
			return 0
		case "ready":
			return 1
		case "created":
			return 2
		}
		return 3
	}
	sort.SliceStable(tasks, func(i, j int) bool {
		ri, rj := rank(tasks[i]), rank(tasks[j])
		if ri != rj {
			return ri < rj
		}
		return tasks[i].waitSince < tasks[j].waitSince
	})
	s.Summary = map[string]int{}
	for _, t := range tasks {
		key := taskState(l, t)
		if key == "waiting" {
			key += ": " + awaitKind(t.futWaiter)
		}
		s.Summary[key]++
	}
	if limit > 0 && len(tasks) > limit {
		s.Omitted = len(tasks) - limit
		tasks = tasks[:limit]
	}

	var stacks map[uint64][]Frame
	want := map[uint64]bool{}
	missing := 0
	for _, t := range tasks {
		if t.diag != nil && t.diag.goroutine != 0 {
			want[t.diag.goroutine] = true
		} else if t.started {
			missing++
		}
	}
	if len(want) > 0 {
		var truncated bool
		stacks, truncated = goroutineStacks(want)
		if truncated {
			s.Notes = append(s.Notes, fmt.Sprintf("goroutine dump cut at %d MiB: some stacks are missing", maxStackDump>>20))
		}
	}
	if missing > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator", missing))
	}
	cancels := l.cancelRequestsByTask()
	for _, t := range tasks {
		ti := l.taskInfo(t, s.Time, stacks)
		ti.CancelRequests = cancels[t]
		s.Tasks = append(s.Tasks, ti)
	}
	return s
}

func taskState(l *Loop, t *T) string {
	switch {
	case l.current == t:
		return "running"
	case !t.started:
		return "created"
	case t.futWaiter != nil && !t.futWaiter.done():
		return "waiting"
	}
	return "ready"
}

// awaitKind names what a task waiting on f awaits.
func awaitKind(f *futureCore) string {
	if f == nil {
		return ""
	}
	if f.task != nil {
		return "task"
	}
	return f.kind.String()
}

func (l *Loop) taskInfo(t *T, now time.Duration, stacks map[uint64][]Frame) TaskInfo {
	ti := TaskInfo{ID: taskID(t), Name: t.Name(), State: taskState(l, t), Cancelling: int(t.numCancelRequested)}
	if ti.State == "waiting" {
		f := t.futWaiter
		if f.task != nil {
			ti.Awaits = "task '" + f.task.Name() + "'"
			ti.AwaitsID = taskID(f.task)
		} else if f.kind == kindCrossCall {
			ti.Awaits, ti.AwaitsID = l.crossAwait(f) // crossloop.go
		} else {
			ti.Awaits = f.kind.String()
			ti.AwaitsID = futureID(f)
		}
		ti.Waiting = max(now-t.waitSince, 0)
	}
	if d := t.diag; d != nil {
		ti.Creator = d.creator
		if d.delivered && t.numCancelRequested >= d.deliveredCount {
			if f, ok := userFrame(d.deliveredPCs); ok {
				ti.CancelDeliveredAt = &f
			}
		}
		ti.Goroutine = d.goroutine
		if fs, ok := stacks[d.goroutine]; ok && d.goroutine != 0 {
			ti.Stack = trimTaskStack(fs)
		}
	}
	ti.AwaitedBy = awaitersOf(t.fut)
	return ti
}

// awaitersOf lists the tasks waiting on f: directly (an await), or through
// futures that wait on f (a gather's, a shield's...), as far as tasks.
func awaitersOf(f *futureCore) []Awaiter {
	var out []Awaiter
	seen := map[*futureCore]bool{f: true}
	var walk func(f *futureCore, via []string, depth int)
	walk = func(f *futureCore, via []string, depth int) {
		add := func(w *futureCore) {
			if w == nil || seen[w] {
				return
			}
			seen[w] = true
			if w.task != nil {
				out = append(out, Awaiter{ID: taskID(w.task), Name: w.task.Name(), Via: via})
				return
			}
			if depth < 16 {
				walk(w, append(append([]string(nil), via...), w.kind.String()), depth+1)
			}
		}
		if f.waiter != nil {
			add(f.waiter.fut)
		}
		for _, cb := range f.callbacks {
			if cb.task != nil {
				add(cb.task.fut)
			} else {
				add(cb.awaiter)
			}
		}
	}
	walk(f, nil, 0)
	return out
}

// goroutineStacks takes the stacks of every goroutine (one
// runtime.Stack(all) call, which stops the world while it runs) and parses
// those of the goroutines in want. truncated reports a dump larger than
// maxStackDump.
func goroutineStacks(want map[uint64]bool) (stacks map[uint64][]Frame, truncated bool) {
	buf := make([]byte, 256<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= maxStackDump {
			truncated = true
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return parseGoroutineStacks(string(buf), want), truncated
}

// parseGoroutineStacks parses runtime.Stack(all) text: "goroutine N
// [state]:", then a "function(args)" line and a "\tfile:line +0x.." line
// per frame, up to "created by".
func parseGoroutineStacks(dump string, want map[uint64]bool) map[uint64][]Frame {
	out := map[uint64][]Frame{}
	for _, block := range strings.Split(dump, "\n\n") {
		if !strings.HasPrefix(block, "goroutine ") {
			continue
		}
		lines := strings.Split(block, "\n")
		var id uint64
		if _, err := fmt.Sscanf(lines[0], "goroutine %d", &id); err != nil || !want[id] {
			continue
		}
		var frames []Frame
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if strings.HasPrefix(fn, "created by ") || !strings.HasPrefix(lines[i+1], "\t") {
				break
			}
			if p := strings.LastIndexByte(fn, '('); p > 0 {
				fn = fn[:p]
			}
			loc := strings.TrimSpace(lines[i+1])
			if sp := strings.IndexByte(loc, ' '); sp >= 0 {
				loc = loc[:sp]
			}
			var f Frame
			f.Function = fn
			if c := strings.LastIndexByte(loc, ':'); c >= 0 {
				f.File = loc[:c]
				fmt.Sscanf(loc[c+1:], "%d", &f.Line)
			}
			frames = append(frames, f)
		}
		out[id] = frames
	}
	return out
}

// ---- from other goroutines

// SnapshotThreadsafe takes a snapshot of l from any goroutine: the
// snapshot is taken on the loop, through CallSoonThreadsafe, between two
// callbacks, so it is consistent and races with nothing. If the loop does
// not take it within timeout (it is blocked in a callback or step, or not
// running), the result has Blocked set and nothing else; a closed loop
// gives an empty snapshot with Closed set. A timeout <= 0 panics with a
// *ValueError.
func (l *Loop) SnapshotThreadsafe(timeout time.Duration, opts SnapshotOptions) *LoopSnapshot {
	if timeout <= 0 {
		panic(&ValueError{Msg: fmt.Sprintf("SnapshotThreadsafe: timeout %v, want > 0", timeout)})
	}
	ch := make(chan *LoopSnapshot, 1)
	if _, err := l.CallSoonThreadsafe(func() { ch <- l.snapshot(opts) }); err != nil {
		if errors.Is(err, ErrLoopClosed) {
			return &LoopSnapshot{Closed: true, Tasks: []TaskInfo{}}
		}
		return &LoopSnapshot{Blocked: true, Tasks: []TaskInfo{}, Notes: []string{err.Error()}}
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case s := <-ch:
		return s
	case <-timer.C:
		return &LoopSnapshot{Blocked: true, Tasks: []TaskInfo{}, Notes: []string{fmt.Sprintf(
			"the loop did not take the snapshot within %v: it is blocked in a callback or task step that does not return to the loop, or it is not running", timeout)}}
	}
}

// WriteDump writes, from any goroutine, the task tree and the task table of
// l (SnapshotThreadsafe, then WriteTree and WritePS): what a signal
// handler calls to see inside a running program.
func (l *Loop) WriteDump(w io.Writer, timeout time.Duration) error {
	s := l.SnapshotThreadsafe(timeout, SnapshotOptions{})
	if err := s.WriteTree(w); err != nil {
		return err
	}
	if _, err := w.Write([]byte("\n")); err != nil {
		return err
	}
	return s.WritePS(w)
}

// ---- ErrDeadlock with a dump

// deadlockDumpTasks bounds the tasks a DeadlockError describes (its
// message prints them).
const deadlockDumpTasks = 100

// DeadlockError is the error RunForever returns on virtual time when the
// loop would block forever (it matches ErrDeadlock): it carries a snapshot
// of what the tasks were waiting on (the first 100 described, all
// counted), which its message includes.
type DeadlockError struct {
	Snapshot *LoopSnapshot
}

// Error is ErrDeadlock's message followed by the task tree.
func (e *DeadlockError) Error() string {
	var b strings.Builder
	b.WriteString(ErrDeadlock.Error())
	if e.Snapshot != nil && len(e.Snapshot.Tasks) > 0 {
		b.WriteString("; the tasks and what they wait on:\n")
		_ = e.Snapshot.WriteTree(&b)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Is reports that a DeadlockError matches ErrDeadlock.
func (e *DeadlockError) Is(target error) bool { return target == ErrDeadlock }

// uintptrOf is p's address, for ids.
func uintptrOf[P any](p *P) uintptr { return uintptr(unsafe.Pointer(p)) }

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
