package asyncio

import "context"

// Runner runs coroutine functions on one loop it owns (asyncio.Runner).
// Use RunWith to run a function on it, and Close when done.
type Runner struct {
	loop   *Loop
	opts   []LoopOption
	closed bool
	// interrupts is the running RunWith's Ctrl-C state (runner_signal.go).
	interrupts *interrupts
	// vars is the context every run's main task runs in, unless given
	// another (Runner._context; varcontext.go).
	vars *VarContext
}

// withRunnerContext puts the runner's VarContext first in opts, so that a
// WithContext or WithVarContext the caller gives replaces it
// (Runner.run(coro, context=None) runs in the runner's context). Until a
// run sets a variable there is none: the main task starts with no context
// node, as any task does (CTX-2).
func (r *Runner) withRunnerContext(opts []TaskOption) []TaskOption {
	if r.vars == nil {
		return opts
	}
	return append([]TaskOption{WithVarContext(r.vars)}, opts...)
}

// keepRunnerContext, after a run in the runner's context, keeps what main
// set there for the next runs (with a VarContext, the Sets were written
// through already). A VarContext main asked for (T.VarContext) is the
// runner's context from then on: in Python it is Runner._context itself,
// so what the next runs set shows in it.
func (r *Runner) keepRunnerContext(main *T, inRunnerContext bool) {
	if inRunnerContext && r.vars == nil && main.ctx != nil {
		if c := main.ctx; c.owner == main && c.vars != nil {
			r.vars = c.vars
			return
		}
		r.vars = &VarContext{base: main.baseContext(), origin: main}
	}
}

// NewRunner returns a Runner whose loop is created, with opts, on first
// use. A nil option panics with a *ValueError at once.
func NewRunner(opts ...LoopOption) *Runner {
	checkLoopOptions("NewRunner", opts)
	return &Runner{opts: opts}
}

// Loop returns the runner's loop, creating it if needed
// (asyncio's Runner.get_loop). After Close it panics with the
// *RuntimeError "Runner is closed", as get_loop raises it (RUN-2).
func (r *Runner) Loop() *Loop {
	if r.closed {
		panic(runtimeErrorf("Runner is closed"))
	}
	if r.loop == nil {
		r.loop = NewLoop(r.opts...)
	}
	return r.loop
}

// RunWith runs main as a task on r's loop until it is done and returns its
// result (asyncio's Runner.run). Other tasks stay as they are until Close.
// opts are main's task options: RunWith(r, main, WithContext(ctx)) is
// Runner.run(coro, context=ctx), and also cancels main when ctx is done
// (the returned *CancelledError then matches context.Cause(ctx)).
//
// While it runs, the first SIGINT cancels main and a second one stops
// waiting for it; either way RunWith then returns ErrInterrupted (see
// runner_signal.go for the details, as asyncio.Runner handles Ctrl-C). A
// nil main, or a nil r, panics with a *ValueError and changes nothing.
func RunWith[V any](r *Runner, main func(*T) (V, error), opts ...TaskOption) (V, error) {
	var zero V
	if r == nil {
		panic(valueErrorf("RunWith: nil Runner (make it with NewRunner)"))
	}
	if main == nil {
		// Before the loop is made (Runner.run checks its coroutine first):
		// Run would otherwise leave a loop nobody closes.
		panic(valueErrorf("RunWith: nil main function"))
	}
	// Whichever loop runs the caller, as Runner.run checks
	// events._get_running_loop(): nested, the outer loop would stall.
	if callerRunsALoop() || (r.loop != nil && r.loop.running.Load()) {
		return zero, runtimeErrorf("Runner.run() cannot be called from a running event loop")
	}
	if r.closed {
		return zero, runtimeErrorf("Runner is closed")
	}
	l := r.Loop()
	if l.IsClosed() { // closed by hand: create_task raises it
		return zero, errLoopClosed()
	}
	if err := l.checkSameBubble(); err != nil { // before main exists
		return zero, err
	}
	task := CreateTask(l, main, r.withRunnerContext(opts)...)
	inRunnerContext := task.t.ctx == nil || (r.vars != nil && task.t.ctx.vars == r.vars)
	in := startInterrupts(l, &task.t)
	r.interrupts = in
	defer func() {
		// A runtime.Goexit in main ends this goroutine inside
		// RunUntilComplete (DESIGN.md, "The handoff"): SIGINT must not stay
		// watched.
		if !in.finished {
			in.stopWatch()
			r.interrupts = nil
		}
	}()
	// RunUntilComplete already retrieved main's error: return that one, as
	// a second retrieval of a cancelled task loses its message (FUT-8).
	err := in.finish(l.RunUntilComplete(task))
	r.interrupts = nil
	r.keepRunnerContext(&task.t, inRunnerContext)
	if err != nil {
		return zero, task.t.boundContextError(err)
	}
	return task.f.value, nil
}

// Close shuts the runner down (RUN-3): it cancels every task still
// pending, runs the loop until they have all finished, reports those that
// ended with an error other than a cancellation ("unhandled exception
// during asyncio.run() shutdown"), shuts the default executor down, and
// closes the loop. It is idempotent. A runner that has no loop yet (never
// used) has nothing to close and stays usable, as Runner.close() returns
// at once on a runner not yet initialised. On the other side of a
// testing/synctest bubble from where its loop was created, once that loop
// has run, it returns a *RuntimeError and changes nothing, as Loop.Close
// does.
func (r *Runner) Close() error {
	if r.closed || r.loop == nil {
		return nil
	}
	if r.loop.running.Load() {
		// Refused before anything changes: CPython cancels every task
		// first and then fails the same way, leaving the runner open.
		return runtimeErrorf("Cannot close a running event loop")
	}
	if !r.loop.IsClosed() {
		// Before anything changes, as for a running loop: the runner can
		// still be closed where its loop was created.
		if err := r.loop.checkCloseSide("Runner.Close"); err != nil {
			return err
		}
	}
	r.closed = true
	l := r.loop
	cancelAllTasks(l)
	// asyncio's Runner.close runs shutdown_asyncgens() and
	// shutdown_default_executor() with run_until_complete, two tasks that
	// each draw a number of the default names (TASK-2): draw them too, so
	// that a program running several Runs names its tasks as in CPython.
	taskCounter.Add(2)
	err := shutdownDefaultExecutorForRunner(l)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return err
}

// Run runs main as a task on a new loop until it is done, cancels and
// drains every task left, closes the loop, and returns main's result or
// error (asyncio.run). Called from a task or callback of a running loop
// it returns the *RuntimeError "asyncio.run() cannot be called from a
// running event loop" at once, as asyncio.run raises it (RUN-1). A nil
// main panics with a *ValueError before any loop is made.
func Run[V any](main func(*T) (V, error), opts ...LoopOption) (V, error) {
	return run(main, opts)
}

// RunContext is Run with a context for main (WithContext): main starts
// with ctx as its context, and when ctx is done main is cancelled with
// the text of context.Cause(ctx) as the message; the error returned then
// is a *CancelledError that also matches the cause (errors.Is(err,
// context.Canceled), errors.Is(err, context.DeadlineExceeded), or a cause
// given to a CancelCauseFunc). With signal.NotifyContext this is Ctrl-C
// handling. A nil ctx panics with a *ValueError.
func RunContext[V any](ctx context.Context, main func(*T) (V, error), opts ...LoopOption) (V, error) {
	return run(main, opts, WithContext(ctx))
}

func run[V any](main func(*T) (V, error), opts []LoopOption, taskOpts ...TaskOption) (V, error) {
	if callerRunsALoop() {
		var zero V
		return zero, runtimeErrorf("asyncio.run() cannot be called from a running event loop")
	}
	r := NewRunner(opts...)
	v, err := RunWith(r, main, taskOpts...)
	if cerr := r.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return v, err
}
