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
