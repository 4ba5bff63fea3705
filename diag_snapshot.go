package asyncio

// Seeing inside a loop: the snapshot of every task (diag_ps.go renders it;
// diag_callgraph.go builds call graphs from the same edges, diag_frames.go
// reads the stacks, diag_cancel.go keeps the cancel log).
//
// What is free, always on: a future's kind (a byte in padding), the
// awaited-by edges of combinators (a pointer in their done-callback
// registrations), the coarse clock a task reads when it suspends, and one
// record per cancel request (an allocation per cancelled task).
//
// What costs, only when asked (an observer, diag_observe.go: with none,
// one nil check on the hot paths):
// the goroutine of each task, recorded at its first step, so a snapshot can
// show the line each suspended task waits on (WithTaskStacks, debug mode);
// pprof labels (WithTaskLabels); runtime/trace tasks and regions (while
// tracing); step timing (WithStepTiming); the requesting Go frame of each
// cancel request and swallowed-cancellation reports (debug mode).

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/go-asyncio/asyncio/internal/gid"
)

// taskID formats a task's identity as asyncio's tools do: its address.
func taskID(t *T) string { return fmt.Sprintf("%#x", uintptrOf(t)) }

func futureID(f *futureCore) string { return fmt.Sprintf("%#x", uintptrOf(f)) }

// ---- the snapshot

// TaskInfo is one task in a LoopSnapshot.
type TaskInfo struct {
	// ID is the task's address, as asyncio's tools show id(task).
	ID   string `json:"id"`
	Name string `json:"name"`
	// State is "created" (its first step not run yet), "ready" (queued to
	// run), "running" (its step is in progress: the task that took the
	// snapshot, and, while an eager task's first step runs inside
	// CreateTask (WithEagerStart), the task that created it, whose step
	// goes on when CreateTask returns) or "waiting" (suspended on a
	// future).
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
	// Busy (with Blocked): SnapshotThreadsafe did not ask the loop,
	// because a snapshot with other options was in flight.
	Busy bool `json:"busy,omitempty"`
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
// any other goroutine use Loop.SnapshotThreadsafe. A nil owner panics
// with a *ValueError.
func Snapshot(owner LoopOwner, opts SnapshotOptions) *LoopSnapshot {
	l := loopOf(owner, "Snapshot")
	l.checkThread("Snapshot") // another goroutine would race with the loop
	return l.snapshot(opts)
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
	states := l.taskStates()
	rank := func(t *T) int {
		switch states[t] {
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
		key := states[t]
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
		ti := l.taskInfo(t, states[t], s.Time, stacks)
		ti.CancelRequests = cancels[t]
		s.Tasks = append(s.Tasks, ti)
	}
	return s
}

// taskStates gives the state of each of l's tasks (TaskInfo.State). A
// started task that neither waits on a pending future nor has a step in
// the ready queue is mid-step: it created the eager task whose first step
// runs now (or the task that one created, and so on) and is inside
// CreateTask. The loop keeps no list of those (that would cost every eager
// CreateTask), so the ready queue is read instead: once per snapshot.
func (l *Loop) taskStates() map[*T]string {
	states := make(map[*T]string, len(l.tasks))
	var queued map[*T]bool
	for _, t := range l.tasks {
		switch {
		case l.current == t:
			states[t] = "running"
		case !t.started:
			states[t] = "created"
		case t.futWaiter != nil && !t.futWaiter.done():
			states[t] = "waiting"
		default:
			if queued == nil {
				queued = l.queuedSteps()
			}
			if queued[t] {
				states[t] = "ready"
			} else {
				states[t] = "running"
			}
		}
	}
	return states
}

// queuedSteps is the set of tasks with a step in the ready queue.
func (l *Loop) queuedSteps() map[*T]bool {
	q := &l.ready
	m := make(map[*T]bool, q.n)
	for i := 0; i < q.n; i++ {
		if e := &q.buf[(q.head+i)&(len(q.buf)-1)]; e.isStep() {
			m[e.task()] = true
		}
	}
	return m
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

func (l *Loop) taskInfo(t *T, state string, now time.Duration, stacks map[uint64][]Frame) TaskInfo {
	ti := TaskInfo{ID: taskID(t), Name: t.Name(), State: state, Cancelling: int(t.numCancelRequested)}
	if ti.State == "waiting" {
		f := t.futWaiter
		if f.task != nil {
			ti.Awaits = "task " + pyQuote(f.task.Name())
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
			if seen[w] {
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
		for _, w := range directAwaiters(f) {
			add(w)
		}
	}
	walk(f, nil, 0)
	return out
}

// ---- from other goroutines

// SnapshotThreadsafe takes a snapshot of l from any goroutine: the
// snapshot is taken on the loop, through CallSoonThreadsafe, between two
// callbacks, so it is consistent and races with nothing. If the loop does
// not begin taking it within timeout (it is blocked in a callback or step,
// or not running), the result has Blocked set and nothing else, and the
// request costs the loop nothing later: once every caller waiting for it
// has given up, the loop skips it. Once the loop has begun, the call waits
// for the snapshot. A closed loop gives an empty snapshot with Closed set.
// A timeout <= 0 panics with a *ValueError. Called on the loop itself (a
// task, or a callback such as a signal handler's calling WriteDump), it
// takes the snapshot there and then, as Snapshot does: a request queued
// behind the caller could not be taken before the caller returned.
//
// The work other goroutines can ask of the loop is bounded: one request
// per loop is in flight at a time. Callers asking with the same options
// while one is in flight share its snapshot (they get the same
// *LoopSnapshot: treat it as read-only); a caller with other options gets
// at once a result with Blocked and Busy set and a note saying so.
func (l *Loop) SnapshotThreadsafe(timeout time.Duration, opts SnapshotOptions) *LoopSnapshot {
	if timeout <= 0 {
		panic(&ValueError{Msg: fmt.Sprintf("SnapshotThreadsafe: timeout %v, want > 0", timeout)})
	}
	if h := l.holder.Load(); h != 0 && h == gid.Token() {
		// On the loop: waiting for the loop would block it for the whole
		// timeout and then report it blocked, by this very wait.
		return l.snapshot(opts)
	}
	r, now := l.joinSnapshot(opts)
	if r == nil {
		return now
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-r.done:
		return r.result
	case <-timer.C:
		if !l.leaveSnapshot(r) {
			<-r.done // the loop is taking it
			return r.result
		}
		return &LoopSnapshot{Blocked: true, Tasks: []TaskInfo{}, Notes: []string{fmt.Sprintf(
			"the loop did not take the snapshot within %v: it is blocked in a callback or task step that does not return to the loop, or it is not running", timeout)}}
	}
}

// WriteDump writes, from any goroutine, the task tree and the task table of
// l (SnapshotThreadsafe, then WriteTree and WritePS): what a signal
// handler calls to see inside a running program. A nil w panics with a
// *ValueError before the snapshot is taken.
func (l *Loop) WriteDump(w io.Writer, timeout time.Duration) error {
	if w == nil {
		panic(valueErrorf("WriteDump: nil writer"))
	}
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
