package asyncio

import (
	"context"
	"time"
)

// TaskOption configures CreateTask.
type TaskOption func(*T)

// WithName names the task (asyncio's create_task(name=...)), "" included, as
// asyncio keeps name="" (only no name draws a number). Without it
// the task is named Task-N.
func WithName(name string) TaskOption { return func(t *T) { t.name, t.named = name, true } }

// WithEagerStart makes the task start eagerly (asyncio's
// Task(coro, eager_start=True), create_task(..., eager_start=True) in
// 3.14): if the loop is running, CreateTask runs the task's first step at
// once, with the task as CurrentTask, until its function first suspends or
// returns; only then does CreateTask return. Without a running loop the
// task is scheduled as usual. A task whose WithContext ctx is done already
// does not run at all: it is done, cancelled, when CreateTask returns
// (CANCEL-3).
func WithEagerStart() TaskOption { return func(t *T) { t.eager = eagerAsked } }

// WithContext gives the task ctx as its context instead of its creator's
// (asyncio's create_task(context=...), Runner.run(coro, context=...)), and
// binds it: when ctx is done the task is cancelled, with the text of
// context.Cause(ctx) as the message — at once, before its first step, if
// ctx is done already. RunWith then returns a *CancelledError that also
// matches the cause (errors.Is(err, context.Canceled)). The task's Context
// is done when ctx is or when the task is. Tasks it creates get ctx's
// values but not its cancellation (see T.Context). A nil ctx panics with a
// *ValueError.
func WithContext(ctx context.Context) TaskOption {
	if ctx == nil {
		panic(&ValueError{Msg: "WithContext: nil context"})
	}
	return func(t *T) { t.ctx = &taskCtx{base: ctx, owner: t, bound: ctx, boundBase: true} }
}

// LoopOption configures a new Loop.
type LoopOption func(*Loop)

// WithVirtualTime makes the loop run on a virtual clock that starts at 0:
// whenever the loop would block for d with nothing ready and no file
// descriptor registered, the clock jumps by d at once and no real time
// passes. When it would block forever with nothing to wait for, RunForever
// returns ErrDeadlock instead of hanging (a signal handler is something to
// wait for: a signal from outside runs it). With file descriptors registered
// the loop first polls them without waiting and jumps only when none is
// ready. Outside work in flight (executor jobs, Go calls, waiting Recv and
// Send, ExpectExternal) takes no virtual time: the loop waits for it
// instead of jumping, and after a grace period of real time with nothing
// else to run reports it to the exception handler, with where it started
// (WithOutsideGrace). This is Trio's MockClock with autojump, for tests.
func WithVirtualTime() LoopOption { return func(l *Loop) { l.virtual = true } }

// WithEagerTasks makes every task of the loop start eagerly, as
// WithEagerStart does for one (asyncio's
// loop.set_task_factory(asyncio.eager_task_factory)): this includes the
// tasks that TaskGroup's Spawn, GatherFuncs and the other combinators
// create. A coroutine that completes synchronously then never costs a
// scheduled step.
func WithEagerTasks() LoopOption { return func(l *Loop) { l.eagerTasks = true } }

// WithDebug turns debug mode on (asyncio's debug=True; see Loop.SetDebug).
func WithDebug() LoopOption { return func(l *Loop) { l.debug = true } }

// WithBlockedThreshold sets the watchdog's threshold from the start, as
// Loop.SetBlockedThreshold does on a running loop: how long one task step
// or callback may hold the loop before it is reported; d <= 0 turns the
// watchdog off.
func WithBlockedThreshold(d time.Duration) LoopOption {
	return func(l *Loop) { l.wd.explicit = blockedSetting(d) }
}

// WithSlowCallbackDuration sets debug mode's slow-callback threshold from
// the start (asyncio's loop.slow_callback_duration), as
// Loop.SetSlowCallbackDuration does later.
func WithSlowCallbackDuration(d time.Duration) LoopOption {
	return func(l *Loop) { l.slowCallback = d }
}

// WithDefaultExecutor makes ex the loop's default executor from the
// start, as Loop.SetDefaultExecutor does later (asyncio's
// set_default_executor). A nil ex panics with a *ValueError when the
// option is made.
func WithDefaultExecutor(ex Executor) LoopOption {
	if ex == nil {
		panic(valueErrorf("WithDefaultExecutor: nil executor"))
	}
	return func(l *Loop) { defaultExecutor(l).custom = ex }
}

// WithLoopName names the loop (Loop.Name); the watchdog's report of a
// blocked loop names it. A LoopGroup names its loops "loop <i>".
func WithLoopName(name string) LoopOption { return func(l *Loop) { l.grp.name = name } }

// WithTaskStacks records each task's goroutine at its first step (about a
// microsecond per task), so that snapshots (Snapshot, SnapshotThreadsafe,
// the ErrDeadlock dump) and call graphs (CaptureCallGraph) show the Go
// line each suspended task waits on, and the task that created it. Debug
// mode records them too.
func WithTaskStacks() LoopOption { return func(l *Loop) { l.diagSet.stacks = true } }

// WithTaskLabels sets a pprof label on each task's goroutine at its first
// step: LabelTask ("asyncio.task") = the task's name, so CPU and goroutine
// profiles split by task. It costs an allocation or two per task. Samples
// taken while a task's goroutine runs the loop's callbacks between its own
// steps carry that task's label too. Debug mode sets the labels too.
func WithTaskLabels() LoopOption { return func(l *Loop) { l.diagSet.labels = true } }

// WithStepTiming times every callback and task step, for Stats'
// CallbackTime, StepTime and StepDurations (two clock reads per step).
// Debug mode times them too.
func WithStepTiming() LoopOption { return func(l *Loop) { l.diagSet.timing = true } }
