package asyncio

import (
	"fmt"
	"strings"
)

// tgErrorMessage is the message of the ExceptionGroup a TaskGroup raises.
const tgErrorMessage = "unhandled errors in a TaskGroup"

// Group is an entered asyncio.TaskGroup. It is handed to the body of
// TaskGroup; use Spawn to start children in it and Cancel to end it early.
// A Group must only be used from tasks of its loop.
type Group struct {
	loop                  *Loop
	parent                *T
	entered               bool
	exiting               bool
	aborting              bool
	parentCancelRequested bool
	// children holds the children in creation order, so that an abort
	// cancels them in that order; a handled child is marked removed and
	// the slice is compacted now and then, so removal is O(1) amortised
	// even for 100k children.
	children    []*groupChild
	live        int // children not yet handled
	errors      []error
	onCompleted *Future[struct{}]
}

// TaskGroup runs body in the calling task t with a new task group, then
// waits for every child started with Spawn (async with asyncio.TaskGroup()
// as g, 3.13+ semantics; TG-3, TG-4):
//
//   - The first child that fails with an error that is not a cancellation
//     aborts the group: the other children are cancelled (in creation
//     order) and t is cancelled once, so body's current await returns a
//     CancelledError. That cancellation is withdrawn (t.Uncancel) on exit.
//   - If body returns an error, the children are cancelled and awaited.
//   - The result is nil when nothing failed; the body's CancelledError when
//     t was cancelled from outside and no child failed; otherwise an
//     *ExceptionGroup with the children's errors in done-handler order and
//     the body's non-cancellation error last. If t also has an outside
//     cancellation pending, it is re-armed so t's next await returns a
//     CancelledError (3.13).
//   - A panic in body is asyncio's KeyboardInterrupt case: the children are
//     cancelled and awaited, their errors go to the exception handler, and
//     the panic continues with its original value.
//
// t must be the running task; otherwise TaskGroup returns the *RuntimeError
// "TaskGroup <TaskGroup> cannot determine the parent task" without running
// body.
func TaskGroup(t *T, body func(g *Group) error) error {
	t.checkCaller("TaskGroup")
	if body == nil {
		panic(valueErrorf("TaskGroup: nil body"))
	}
	g := &Group{loop: t.Loop()}
	if CurrentTask(g.loop) != t {
		return &RuntimeError{Msg: fmt.Sprintf("TaskGroup %v cannot determine the parent task", g)}
	}
	g.parent = t
	g.entered = true

	var bodyErr error
	var panicValue any
	panicked := true
	func() {
		defer func() {
			if panicked {
				panicValue = recover()
			}
		}()
		bodyErr = body(g)
		panicked = false
	}()
	if panicked {
		g.exitPanicking()
		g.errors = nil
		panic(panicValue)
	}
	err := g.exit(bodyErr)
	g.errors = nil // as asyncio: the repr of a finished group shows none
	return err
}

// Spawn starts fn as a new child task of g (asyncio.TaskGroup.create_task).
// opts are passed to CreateTask. It fails with a *RuntimeError, without
// starting fn, if g was never entered ("TaskGroup <TaskGroup> has not been
// entered"), has finished ("... is finished") or is aborting ("... is
// shutting down"). Children may be spawned while TaskGroup waits for the
// others on exit (TG-2).
func Spawn[V any](g *Group, fn func(*T) (V, error), opts ...TaskOption) (*Task[V], error) {
	return spawn(g, fn, opts, false)
}

// spawn is Spawn; with deferred the child is created by createDeferredTask
// (BoundedTaskGroup's queued children).
func spawn[V any](g *Group, fn func(*T) (V, error), opts []TaskOption, deferred bool) (*Task[V], error) {
	if g == nil {
		panic(valueErrorf("Spawn: nil *Group"))
	}
	if fn == nil {
		panic(valueErrorf("Spawn: nil coroutine function"))
	}
	if !g.entered {
		return nil, &RuntimeError{Msg: fmt.Sprintf("TaskGroup %v has not been entered", g)}
	}
	g.loop.checkThread("Spawn")
	if g.exiting && g.live == 0 {
		return nil, &RuntimeError{Msg: fmt.Sprintf("TaskGroup %v is finished", g)}
	}
	if g.aborting {
		return nil, &RuntimeError{Msg: fmt.Sprintf("TaskGroup %v is shutting down", g)}
	}
	var task *Task[V]
	if deferred {
		task = createDeferredTask(g.loop, fn, opts...)
	} else {
		task = CreateTask(g.loop, fn, opts...)
	}
	child := &groupChild{task: task}
	g.children = append(g.children, child)
	g.live++
	// Always via a done callback, even for a task that is already done, so
	// an early failure cannot cancel the parent too early (gh-128550).
	task.f.addDoneCallbackFrom(func() { g.onTaskDone(child) }, g.parent.fut)
	// A child started eagerly may have aborted the group (Group.Cancel) in
	// its eager step, before it was added above: the abort missed it
	// (CPython main, gh-155418).
	if g.aborting && !task.Done() {
		task.Cancel()
	}
	return task, nil
}

// SpawnErr is Spawn for a coroutine function with no value: the child's
// outcome is fn's error alone.
func SpawnErr(g *Group, fn func(*T) error, opts ...TaskOption) (*Task[struct{}], error) {
	if fn == nil {
		panic(valueErrorf("SpawnErr: nil coroutine function"))
	}
	return Spawn(g, func(t *T) (struct{}, error) { return struct{}{}, fn(t) }, withFuncOf(fn, opts)...)
}

// Cancel ends the group early without an error (asyncio.TaskGroup.cancel,
// Python 3.15): the not-done children are cancelled, and so is the body's
// task, whose cancellation the group then absorbs, so TaskGroup returns nil
// unless a child failed. It is idempotent and a no-op once the group has
// finished.
func (g *Group) Cancel() {
	if !g.entered {
		return
	}
	if g.exiting && g.live == 0 {
		return
	}
	if !g.aborting {
		g.abort()
		if g.parent != nil && !g.parentCancelRequested {
			g.parentCancelRequested = true
			g.parent.Cancel()
		}
	}
}

// String is asyncio's TaskGroup repr: "<TaskGroup tasks=2 errors=1
// cancelling>", "<TaskGroup entered>", "<TaskGroup>".
func (g *Group) String() string {
	var b strings.Builder
	b.WriteString("<TaskGroup")
	if n := g.live; n > 0 {
		fmt.Fprintf(&b, " tasks=%d", n)
	}
	if n := len(g.errors); n > 0 {
		fmt.Fprintf(&b, " errors=%d", n)
	}
	if g.aborting {
		b.WriteString(" cancelling")
	} else if g.entered {
		b.WriteString(" entered")
	}
	b.WriteString(">")
	return b.String()
}

// abort is TaskGroup._abort: cancel every not-done child, in creation order.
func (g *Group) abort() {
	g.aborting = true
	// Cancel never runs task code, so the slice cannot change meanwhile.
	for _, c := range g.children {
		if !c.removed && !c.task.Done() {
			c.task.Cancel()
		}
	}
}

// waitChildren is step 4 of __aexit__: wait until no child remains. A
// cancellation of the parent while not aborting is returned (and aborts);
// while aborting it is swallowed. pending is the last cancellation seen.
func (g *Group) waitChildren(propagate error) (newPropagate, pending error) {
	for g.live > 0 {
		if g.onCompleted == nil {
			g.onCompleted = NewFuture[struct{}](g.loop)
			g.onCompleted.kind = kindTaskGroup
		}
		if _, err := g.onCompleted.Await(g.parent); err != nil && IsCancelled(err) {
			if g.parent.killed {
				// Close is unwinding the parent (a TaskGroup in a deferred
				// call): every await returns at once and the children
				// never run again, so waiting would spin forever.
				g.onCompleted = nil
				return err, err
			}
			g.parent.cancelHandled() // returned or re-armed on exit
			pending = err
			if !g.aborting {
				propagate = err
				g.abort()
			}
		}
		g.onCompleted = nil
	}
	return propagate, pending
}

// exit is TaskGroup.__aexit__ (TG-4, 3.13+ with the 3.15 fixes).
func (g *Group) exit(bodyErr error) error {
	g.exiting = true
	var propagate error
	if IsCancelled(bodyErr) {
		propagate = bodyErr
	}
	if bodyErr != nil && !g.aborting {
		g.abort()
	}
	propagate, pending := g.waitChildren(propagate)

	if g.parentCancelRequested {
		// The group cancelled its parent: it must take that back.
		if g.parent.Uncancel() == 0 {
			propagate = nil
		} else if propagate == nil {
			// gh-155433: what is left is someone else's cancellation.
			propagate = pending
		}
	}
	if propagate != nil && len(g.errors) == 0 {
		return propagate
	}
	errs := g.errors
	if bodyErr != nil && !IsCancelled(bodyErr) {
		errs = append(errs, bodyErr)
	}
	if len(errs) == 0 {
		return nil
	}
	if g.parent.Cancelling() > 0 {
		// An outside cancellation arrived too: keep it armed so the
		// parent's next await raises it (3.13).
		g.parent.Uncancel()
		g.parent.Cancel()
	}
	return &ExceptionGroup{Msg: tgErrorMessage, Errs: errs}
}

// exitPanicking is __aexit__ for a BaseException (KeyboardInterrupt)
// escaping the body: abort, wait for the children, report their errors
// (gh-135736) and let the panic continue.
func (g *Group) exitPanicking() {
	g.exiting = true
	if !g.aborting {
		g.abort()
	}
	g.waitChildren(nil)
	for _, err := range g.errors {
		g.loop.CallExceptionHandler(ExceptionContext{
			Message: "TaskGroup task exception was not propagated because the TaskGroup body is being closed with a BaseException",
			Err:     err,
			Task:    g.parent,
		})
	}
	// Like asyncio, a base error leaves before the parent is uncancelled.
}

// onTaskDone is TaskGroup._on_task_done (TG-3).
func (g *Group) onTaskDone(c *groupChild) {
	g.removeChild(c)
	child := c.task
	if g.onCompleted != nil && g.live == 0 && !g.onCompleted.Done() {
		g.onCompleted.SetResult(struct{}{})
	}
	if child.Cancelled() {
		return
	}
	err := child.Err()
	if err == nil {
		return
	}
	g.errors = append(g.errors, err)
	if g.parent.Done() {
		g.loop.CallExceptionHandler(ExceptionContext{
			Message: fmt.Sprintf("Task %v has errored out but its parent task %v is already completed", child, g.parent),
			Err:     err,
			Task:    taskOf(child),
		})
		return
	}
	if !g.aborting && !g.parentCancelRequested {
		g.abort()
		g.parentCancelRequested = true
		g.parent.Cancel()
	}
}

// taskOf returns the untyped task behind a task awaitable, or nil.
func taskOf(aw Awaitable) *T {
	switch x := aw.(type) {
	case *T:
		return x
	case interface{ T() *T }:
		return x.T()
	}
	return nil
}

// groupChild is one child of a Group.
type groupChild struct {
	task    Awaitable
	removed bool
}

// removeChild marks c handled and compacts the children when most of them
// are handled.
func (g *Group) removeChild(c *groupChild) {
	c.removed = true
	g.live--
	if g.live == 0 {
		clear(g.children)
		g.children = g.children[:0]
		return
	}
	if len(g.children) > 64 && g.live < len(g.children)/2 {
		kept := g.children[:0]
		for _, x := range g.children {
			if !x.removed {
				kept = append(kept, x)
			}
		}
		clear(g.children[len(kept):])
		g.children = kept
	}
}
