package asyncio

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// taskCounter numbers default task names Task-1, Task-2, ... process-wide
// (TASK-2).
var taskCounter atomic.Uint64

// withDefaultName names the task Task-n, with n drawn from taskCounter
// beforehand: StaggeredRace numbers its attempts when asyncio would have
// made their tasks, not when it spawns them.
func withDefaultName(n uint64) TaskOption {
	return func(t *T) {
		t.named = true
		if n <= math.MaxUint32 {
			t.nameSeq = uint32(n)
		} else {
			t.name = "Task-" + strconv.FormatUint(n, 10)
		}
	}
}

// taskBody runs a task's function and stores its typed result.
type taskBody interface {
	run(t *T) error
	valueAny() any
}

// T is the handle of a running task, passed to every coroutine function;
// it is also the untyped view of the task (an Awaitable). A coroutine
// awaits with it (fut.Await(t), Sleep(t, d)) and reads its own state
// (t.Cancelling()). Its methods must be called from the goroutine running
// the loop, which is always true inside the task's own function.
type T struct {
	fut  *futureCore // its loop is the task's loop
	name string
	body taskBody

	// sw resumes the task's goroutine for a step and gives control back
	// when the step ends; the goroutine is taken from the loop's pool (or
	// started) at the first step (switch.go).
	sw      taskSwitch
	started bool
	killed  bool
	// eager is eagerAsked (WithEagerStart), then eagerStepping while the
	// first step runs inside CreateTask, so that park gives control
	// straight back to the creator instead of running the loop
	// (eagerStart). One byte, so that T keeps its size.
	eager uint8

	// deferred: created by createDeferredTask and not scheduled yet.
	deferred bool
	// mustCancel is a cancellation waiting for its delivery (asyncio's
	// _must_cancel): cancelNone, cancelPending, or cancelLate (see
	// pendingCancel). One byte, as a bool: T has no room for another.
	mustCancel pendingCancel
	// named: the task was given a name at creation (WithName), even "",
	// which asyncio keeps (only name=None draws a number).
	named bool
	// inCancel is set while cancel passes the request on to futWaiter: a
	// cycle of tasks awaiting each other comes back to t, which must
	// not recurse without end (a stack overflow kills the process).
	inCancel bool
	// swLabelled: the loop set the pprof labels of t's goroutine, which
	// therefore exits with t instead of being pooled (switch.go).
	swLabelled bool
	// The two counters are int32 and sit beside the bools to keep T small:
	// a Task[V] with a V of at most a word fits the 224-byte size class.
	numCancelRequested int32
	tasksIndex         int32 // position in loop.tasks
	// nameSeq, when not 0, is the N of the default name "Task-N", which
	// Name formats on first use: most tasks are never asked their name,
	// and this field fits in padding while the string costs an allocation.
	nameSeq uint32
	// swKey is the index in Loop.workerKeys of the lock key t's
	// goroutine was started under (switch.go).
	swKey uint32
	// cancelMsg is the message of the pending cancellation; nil for none
	// or "" (most cancellations have none: a string would cost T 8 bytes).
	cancelMsg *string
	futWaiter *futureCore
	// stepErr is what the step being resumed throws in (beginStep sets
	// it, park takes it); while the task runs it is nil, or the
	// RuntimeError suspendOn leaves for the next step.
	stepErr error
	// ctx is the task's context state (context.go); nil until anyone
	// gives or asks the task a context.
	ctx *taskCtx
	// fnPC is the code of the coroutine function, for reports of its
	// failure (origin.go); set in CreateTask, or by a wrapper's option.
	fnPC uintptr

	// waitSince is the loop's coarse clock when the task last suspended,
	// for dumps ("waiting for 2s"); diag holds what the diagnostics
	// record (cancel requests, goroutine, trace task), nil until one of
	// them has something to record (diag_observe.go).
	waitSince time.Duration
	diag      *taskDiag
	// timeout is the innermost active Timeout scope of the task (its
	// outer ones are chained through TimeoutScope.outer), so Deadline and
	// Retry can see the deadline that encloses them.
	timeout *TimeoutScope
}

const (
	eagerAsked    = 1
	eagerStepping = 2
)

// Task is asyncio.Task: a coroutine function running as a task of a loop,
// and the future of its outcome. Create one with CreateTask. Unlike a
// Future, its outcome can only come from its function: it has no
// SetResult or SetException.
type Task[V any] struct {
	f  Future[V] // the outcome; f.task is &t
	t  T
	fn func(*T) (V, error)
}

// CreateTask wraps fn in a task on owner's loop and schedules its first
// step with CallSoon (asyncio's create_task / loop.create_task). owner is
// the loop itself or the running task. The task starts with the context of
// the task running now, if any (see T.Context), unless WithContext gives
// another. fn runs on its own goroutine, but only while the loop hands it
// control, so it never runs concurrently with the loop or another task.
// fn's returned error decides the outcome: nil finishes the task with the
// value; a cancellation (errors.Is(err, ErrCancelled)) ends it cancelled;
// anything else fails it. A panic in fn fails the task with a *PanicError.
//
// With WithEagerStart, or on a loop made WithEagerTasks, and if the loop is
// running, the first step is not scheduled but runs at once, inside
// CreateTask, until fn first suspends (asyncio's eager_start=True): a task
// that finishes without suspending is done when CreateTask returns and is
// never scheduled.
//
// A nil fn or a nil option panics with a *ValueError, before the task is
// made or listed.
func CreateTask[V any](owner LoopOwner, fn func(*T) (V, error), opts ...TaskOption) *Task[V] {
	tk, l := newTask(owner, fn, opts, false)
	if (tk.t.eager == eagerAsked || l.eagerTasks) && l.running.Load() {
		if !tk.t.endCancelledUnstarted() { // a done ctx: CANCEL-3 (cancel.go)
			l.eagerStart(&tk.t)
		}
	} else {
		l.scheduleStep(&tk.t)
	}
	return tk
}

// createDeferredTask is CreateTask without the first step: the task
// exists (it is pending, listed, cancellable) but runs only once
// startDeferred schedules it — or at once if it is cancelled meanwhile,
// so that it ends cancelled without running fn (BoundedTaskGroup's queued
// children: no goroutine until a slot frees).
func createDeferredTask[V any](owner LoopOwner, fn func(*T) (V, error), opts ...TaskOption) *Task[V] {
	tk, _ := newTask(owner, fn, opts, true)
	return tk
}

// startDeferred schedules the first step of a deferred task; it reports
// false if the task was started already (a cancellation did it).
func (t *T) startDeferred() bool {
	if !t.deferred {
		return false
	}
	t.deferred = false
	t.fut.loop.scheduleStep(t)
	return true
}

// newTask builds a task and lists it on its loop, without scheduling it.
func newTask[V any](owner LoopOwner, fn func(*T) (V, error), opts []TaskOption, deferred bool) (*Task[V], *Loop) {
	l := loopOf(owner, "CreateTask")
	l.checkThread("CreateTask")
	l.checkClosed()
	if fn == nil {
		panic(valueErrorf("CreateTask: nil coroutine function"))
	}
	tk := &Task[V]{fn: fn}
	tk.f.loop = l
	tk.f.task = &tk.t
	tk.t = T{fut: &tk.f.futureCore, body: tk, ctx: l.inheritedContext()}
	for i, o := range opts {
		if o == nil { // before the task is listed: nothing has changed
			panic(valueErrorf("CreateTask: nil TaskOption at index %d", i))
		}
		o(&tk.t)
	}
	if tk.t.fnPC == 0 {
		tk.t.fnPC = funcPC(fn)
	}
	if !tk.t.named {
		if n := taskCounter.Add(1); n <= math.MaxUint32 {
			tk.t.nameSeq = uint32(n)
		} else {
			tk.t.name = "Task-" + strconv.FormatUint(n, 10)
		}
	}
	if l.debug {
		tk.f.extrasForWrite().unretrieved = newUnretrieved(1)
	}
	if l.obs != nil {
		l.obs.taskCreated(&tk.t)
	}
	tk.t.tasksIndex = int32(len(l.tasks))
	l.tasks = append(l.tasks, &tk.t)
	tk.t.deferred = deferred
	if tk.t.ctx != nil {
		tk.t.watchBoundContext() // WithContext: a done ctx cancels before the first step
	}
	return tk, l
}

// CreateTaskErr is CreateTask for a coroutine function with no value: the
// task's outcome is fn's error alone (a task of Python code that returns
// None).
func CreateTaskErr(owner LoopOwner, fn func(*T) error, opts ...TaskOption) *Task[struct{}] {
	if fn == nil {
		panic(valueErrorf("CreateTaskErr: nil coroutine function"))
	}
	return CreateTask(owner, func(t *T) (struct{}, error) { return struct{}{}, fn(t) }, withFuncOf(fn, opts)...)
}

func (tk *Task[V]) run(t *T) error {
	v, err := tk.fn(t)
	if err == nil {
		tk.f.value = v
	}
	return err
}

// T returns the task's untyped handle (the same *T its function receives).
func (tk *Task[V]) T() *T { return &tk.t }

// Name returns the task's name (asyncio's get_name).
func (tk *Task[V]) Name() string { return tk.t.Name() }

// SetName renames the task (asyncio's set_name).
func (tk *Task[V]) SetName(name string) { tk.t.SetName(name) }

// Await suspends the running task t until tk is done and returns its
// result (await task). Awaiting a done task does not suspend.
func (tk *Task[V]) Await(t *T) (V, error) {
	t.checkRunning("Task.Await")
	return tk.f.await(t)
}

// Result returns the task's value, or its error as Err does.
func (tk *Task[V]) Result() (V, error) { return tk.f.Result() }

// Err returns the task's error (see Awaitable).
func (tk *Task[V]) Err() error { return tk.f.Err() }

// Done reports whether the task is done.
func (tk *Task[V]) Done() bool { return tk.f.Done() }

// Cancelled reports whether the task ended cancelled.
func (tk *Task[V]) Cancelled() bool { return tk.f.Cancelled() }

// AddDoneCallback schedules fn when the task is done (see Awaitable).
func (tk *Task[V]) AddDoneCallback(fn func()) CallbackID { return tk.f.AddDoneCallback(fn) }

// RemoveDoneCallback removes a done callback (see Awaitable).
func (tk *Task[V]) RemoveDoneCallback(id CallbackID) int { return tk.f.RemoveDoneCallback(id) }

// Loop returns the loop the task runs on. A nil t panics with a
// *ValueError saying so (every call given a nil t fails this way).
func (tk *Task[V]) Loop() *Loop { return tk.f.loop }

func (tk *Task[V]) core() *futureCore { return &tk.f.futureCore }

func (tk *Task[V]) valueAny() any { return tk.f.value }

func (tk *Task[V]) isNil() bool { return tk == nil }

// String returns the asyncio-style repr, for logs and debugging.
func (tk *Task[V]) String() string { return tk.t.String() }

// Loop returns the loop the task runs on. A nil t panics with a
// *ValueError saying so (every call given a nil t fails this way).
func (t *T) Loop() *Loop {
	if t == nil { // a call given a nil t (aio's all start here): say so
		panicNilT("T.Loop")
	}
	return t.fut.loop
}

func (t *T) ownerLoop() *Loop { return t.fut.loop }

func (t *T) valueAny() any { return t.body.valueAny() }

func (t *T) isNil() bool { return t == nil }

// Name returns the task's name (asyncio's get_name).
func (t *T) Name() string {
	if t.nameSeq != 0 {
		t.name = taskSeqName(t.nameSeq)
		t.nameSeq = 0
	}
	return t.name
}

// taskSeqName is the default name of the task numbered seq.
func taskSeqName(seq uint32) string { return "Task-" + strconv.FormatUint(uint64(seq), 10) }

// SetName renames the task (asyncio's set_name).
func (t *T) SetName(name string) {
	t.name, t.nameSeq = name, 0
	t.traceRename()
}

// Done reports whether the task is done.
func (t *T) Done() bool { return t.fut.done() }

// Cancelled reports whether the task ended cancelled.
func (t *T) Cancelled() bool { return t.fut.state == stateCancelled }

// Err is the task's Err (see Awaitable).
func (t *T) Err() error { return t.fut.Err() }

// AddDoneCallback schedules fn when the task is done (see Awaitable).
func (t *T) AddDoneCallback(fn func()) CallbackID { return t.fut.addDoneCallback(fn) }

// RemoveDoneCallback removes a done callback (see Awaitable).
func (t *T) RemoveDoneCallback(id CallbackID) int { return t.fut.removeDoneCallback(id) }

func (t *T) core() *futureCore { return t.fut }

// Await suspends t until aw is done and returns aw's error (nil on
// success): the untyped await, for awaitables of any type.
func (t *T) Await(aw Awaitable) error {
	t.checkRunning("T.Await")
	fc := coreOf(aw, "T.Await")
	if fc.state == statePending {
		if err := t.suspendOn(fc); err != nil {
			return err
		}
	}
	return fc.resultErr()
}

// String returns the asyncio-style repr, for logs and debugging.
func (t *T) String() string {
	state := "pending"
	switch {
	case t.fut.state == stateCancelled:
		state = "cancelled"
	case t.fut.state == stateFinished:
		state = "finished"
	case t.numCancelRequested > 0:
		state = "cancelling"
	}
	return fmt.Sprintf("<Task %s name=%s>", state, pyQuote(t.Name()))
}

func (l *Loop) removeTask(t *T) {
	i := int(t.tasksIndex)
	if i < 0 || i >= len(l.tasks) || l.tasks[i] != t {
		return
	}
	last := len(l.tasks) - 1
	l.tasks[i] = l.tasks[last]
	l.tasks[i].tasksIndex = int32(i)
	l.tasks[last] = nil
	l.tasks = l.tasks[:last]
	t.tasksIndex = -1
}

// Sleep suspends the running task t for d (asyncio.sleep). d <= 0 is
// exactly one bare yield: the task runs again after everything already
// ready (SLEEP-1). It returns a *CancelledError if t is cancelled
// meanwhile; the timer is then cancelled too (SLEEP-2). Sleep(t, Never)
// sleeps until cancelled, with no timer (asyncio.sleep(math.inf)): on
// virtual time a loop with nothing else to do then reports ErrDeadlock
// instead of jumping to the end of time.
func Sleep(t *T, d time.Duration) error {
	// t.checkRunning, with its fast path written out (a yield is the
	// cheapest await there is).
	if t == nil || !t.fut.loop.onLoop() || t.fut.loop.current != t {
		t.checkRunning("Sleep")
	}
	if d <= 0 {
		return t.yield()
	}
	l := t.fut.loop
	f := &Future[struct{}]{futureCore: futureCore{loop: l, kind: kindSleep}}
	if d == Never {
		_, err := f.await(t)
		return err
	}
	h := l.callLater(d, func() {
		if !f.done() {
			f.SetResult(struct{}{})
		}
	}, "Sleep")
	_, err := f.await(t)
	h.Cancel()
	return err
}

// CurrentTask returns the task whose step is running on owner's loop, or nil inside
// a plain callback (asyncio.current_task).
func CurrentTask(owner LoopOwner) *T { return loopOf(owner, "CurrentTask").current }

// AllTasks returns the tasks of owner's loop that are not done, including ones not
// started yet (asyncio.all_tasks). The order is unspecified.
func AllTasks(owner LoopOwner) []*T { return append([]*T(nil), loopOf(owner, "AllTasks").tasks...) }

// cancelMessage is the message of t's pending cancellation request.
func (t *T) cancelMessage() string {
	if t.cancelMsg == nil {
		return ""
	}
	return *t.cancelMsg
}

// setCancelMsg records the message of a cancellation request.
func (t *T) setCancelMsg(msg string) {
	if msg == "" {
		t.cancelMsg = nil
		return
	}
	t.cancelMsg = &msg
}
