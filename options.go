package asyncio

// TaskOption configures CreateTask.
type TaskOption func(*T)

// WithName names the task (asyncio's create_task(name=...)). Without it
// the task is named Task-N.
func WithName(name string) TaskOption { return func(t *T) { t.name = name } }

// LoopOption configures a new Loop.
type LoopOption func(*Loop)

// WithVirtualTime makes the loop run on a virtual clock that starts at 0:
// whenever the loop would block for d with nothing ready and no file
// descriptor registered, the clock jumps by d at once and no real time
// passes. When it would block forever with nothing to wait for, RunForever
// returns ErrDeadlock instead of hanging. With file descriptors registered
// the loop first polls them without waiting and jumps only when none is
// ready. This is Trio's MockClock with autojump, for tests.
func WithVirtualTime() LoopOption { return func(l *Loop) { l.virtual = true } }

// WithDebug turns debug mode on (asyncio's debug=True; see Loop.SetDebug).
func WithDebug() LoopOption { return func(l *Loop) { l.debug = true } }

// WithTaskStacks records each task's goroutine at its first step (about a
// microsecond per task), so that snapshots (Snapshot, SnapshotThreadsafe,
// the ErrDeadlock dump) and call graphs (CaptureCallGraph) show the Go
// line each suspended task waits on, and the task that created it. Debug
// mode records them too.
func WithTaskStacks() LoopOption { return func(l *Loop) { l.diagFlags |= diagStacks } }

// WithTaskLabels sets a pprof label on each task's goroutine at its first
// step: LabelTask ("asyncio.task") = the task's name, so CPU and goroutine
// profiles split by task. It costs an allocation or two per task. Samples
// taken while a task's goroutine runs the loop's callbacks between its own
// steps carry that task's label too. Debug mode sets the labels too.
func WithTaskLabels() LoopOption { return func(l *Loop) { l.diagFlags |= diagLabels } }

// WithStepTiming times every callback and task step, for Stats'
// CallbackTime, StepTime and StepDurations (two clock reads per step).
// Debug mode times them too.
func WithStepTiming() LoopOption { return func(l *Loop) { l.diagFlags |= diagTiming } }
