// Package asyncio is a stub of github.com/go-asyncio/asyncio for the
// analyzers' tests: the declarations of API-PLAN.md (after issues 9 and
// 10) that the tests use, with empty bodies.
package asyncio

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"time"
)

type LoopOwner interface{ loopOwner() }

type CallbackID uint64

type Awaitable interface {
	Done() bool
	Err() error
	AddDoneCallback(fn func()) CallbackID
}

type AwaitableOf[V any] interface {
	Awaitable
	Await(t *T) (V, error)
	Result() (V, error)
}

type LoopOption func(*Loop)

func WithDebug() LoopOption       { return nil }
func WithVirtualTime() LoopOption { return nil }

type Loop struct{}

func NewLoop(opts ...LoopOption) *Loop { return &Loop{} }
func NewTestLoop() *Loop               { return &Loop{} }

func (l *Loop) loopOwner()                                        {}
func (l *Loop) Time() time.Duration                               { return 0 }
func (l *Loop) CallSoon(fn func()) *Handle                        { return nil }
func (l *Loop) CallLater(d time.Duration, fn func()) *TimerHandle { return nil }
func (l *Loop) CallAt(when time.Duration, fn func()) *TimerHandle { return nil }
func (l *Loop) CallSoonThreadsafe(fn func()) (*Handle, error)     { return nil, nil }
func (l *Loop) AddReader(fd int, fn func()) error                 { return nil }
func (l *Loop) Stop()                                             {}
func (l *Loop) RunForever() error                                 { return nil }
func (l *Loop) RunUntilComplete(aw Awaitable) error               { return nil }
func (l *Loop) Close() error                                      { return nil }
func (l *Loop) IsClosed() bool                                    { return false }

type Handle struct{}

func (h *Handle) Cancel()         {}
func (h *Handle) Cancelled() bool { return false }

type TimerHandle struct{ Handle }

func (h *TimerHandle) When() time.Duration { return 0 }

type T struct{}

func (t *T) loopOwner()                           {}
func (t *T) Loop() *Loop                          { return nil }
func (t *T) Name() string                         { return "" }
func (t *T) Done() bool                           { return false }
func (t *T) Err() error                           { return nil }
func (t *T) Cancel(msg ...string) bool            { return false }
func (t *T) Cancelling() int                      { return 0 }
func (t *T) Uncancel() int                        { return 0 }
func (t *T) Await(aw Awaitable) error             { return nil }
func (t *T) Context() context.Context             { return nil }
func (t *T) AddDoneCallback(fn func()) CallbackID { return 0 }

type Future[V any] struct{}

func NewFuture[V any](owner LoopOwner) *Future[V]         { return nil }
func (f *Future[V]) SetResult(v V) error                  { return nil }
func (f *Future[V]) SetException(err error) error         { return nil }
func (f *Future[V]) Result() (V, error)                   { var v V; return v, nil }
func (f *Future[V]) Await(t *T) (V, error)                { var v V; return v, nil }
func (f *Future[V]) Done() bool                           { return false }
func (f *Future[V]) Err() error                           { return nil }
func (f *Future[V]) Cancel(msg ...string) bool            { return false }
func (f *Future[V]) Loop() *Loop                          { return nil }
func (f *Future[V]) AddDoneCallback(fn func()) CallbackID { return 0 }

type TaskOption func(*T)

func WithName(name string) TaskOption { return nil }
func WithEagerStart() TaskOption      { return nil }
func WithEagerTasks() LoopOption      { return nil }

type Task[V any] struct{}

func CreateTask[V any](owner LoopOwner, fn func(*T) (V, error), opts ...TaskOption) *Task[V] {
	return nil
}
func CreateTaskErr(owner LoopOwner, fn func(*T) error, opts ...TaskOption) *Task[struct{}] {
	return nil
}
func SpawnErr(g *Group, fn func(*T) error, opts ...TaskOption) (*Task[struct{}], error) {
	return nil, nil
}
func (tk *Task[V]) Await(t *T) (V, error)                { var v V; return v, nil }
func (tk *Task[V]) Result() (V, error)                   { var v V; return v, nil }
func (tk *Task[V]) Err() error                           { return nil }
func (tk *Task[V]) Done() bool                           { return false }
func (tk *Task[V]) Cancelled() bool                      { return false }
func (tk *Task[V]) Cancel(msg ...string) bool            { return false }
func (tk *Task[V]) Cancelling() int                      { return 0 }
func (tk *Task[V]) Uncancel() int                        { return 0 }
func (tk *Task[V]) Name() string                         { return "" }
func (tk *Task[V]) Loop() *Loop                          { return nil }
func (tk *Task[V]) T() *T                                { return nil }
func (tk *Task[V]) AddDoneCallback(fn func()) CallbackID { return 0 }

func CurrentTask(owner LoopOwner) *T { return nil }

func Sleep(t *T, d time.Duration) error { return nil }

type Group struct{}

func TaskGroup(t *T, body func(g *Group) error) error { return nil }
func Spawn[V any](g *Group, fn func(*T) (V, error), opts ...TaskOption) (*Task[V], error) {
	return nil, nil
}
func (g *Group) Cancel() {}

const Never time.Duration = 1<<63 - 1

type TimeoutScope struct{}

func Timeout(t *T, d time.Duration, body func(s *TimeoutScope) error) error      { return nil }
func TimeoutAt(t *T, when time.Duration, body func(s *TimeoutScope) error) error { return nil }
func (s *TimeoutScope) Reschedule(when time.Duration) error                      { return nil }
func (s *TimeoutScope) Expired() bool                                            { return false }
func WaitFor[V any](t *T, d time.Duration, aw AwaitableOf[V]) (V, error)         { var v V; return v, nil }
func WaitForFunc[V any](t *T, d time.Duration, fn func(*T) (V, error)) (V, error) {
	var v V
	return v, nil
}
func Shield[V any](aw AwaitableOf[V]) *Future[V]                                  { return nil }
func Gather[V any](owner LoopOwner, aws ...AwaitableOf[V]) *Future[[]V]           { return nil }
func GatherFuncs[V any](owner LoopOwner, fns ...func(*T) (V, error)) *Future[[]V] { return nil }

type ReturnWhen int

const (
	FirstCompleted ReturnWhen = iota
	FirstException
	AllCompleted
)

func Wait[A Awaitable](t *T, aws []A, timeout time.Duration, when ReturnWhen) (done, pending []A, err error) {
	return nil, nil, nil
}
func AsCompleted[A Awaitable](t *T, aws []A, timeout time.Duration) iter.Seq2[A, error] {
	return nil
}
func AsCompletedOf[V any](t *T, aws []AwaitableOf[V], timeout time.Duration) iter.Seq2[AwaitableOf[V], error] {
	return nil
}

type Lock struct{}

func NewLock() *Lock                { return nil }
func (lk *Lock) Acquire(t *T) error { return nil }
func (lk *Lock) Release() error     { return nil }
func (lk *Lock) Locked() bool       { return false }

type Event struct{}

func NewEvent() *Event            { return nil }
func (ev *Event) Set()            {}
func (ev *Event) Clear()          {}
func (ev *Event) IsSet() bool     { return false }
func (ev *Event) Wait(t *T) error { return nil }

type Condition struct{}

func NewCondition(lk *Lock) *Condition                    { return nil }
func (c *Condition) Acquire(t *T) error                   { return nil }
func (c *Condition) Release() error                       { return nil }
func (c *Condition) Wait(t *T) error                      { return nil }
func (c *Condition) WaitFor(t *T, pred func() bool) error { return nil }
func (c *Condition) Notify(n int) error                   { return nil }
func (c *Condition) NotifyAll() error                     { return nil }

type Semaphore struct{}

func NewSemaphore(v int) *Semaphore     { return nil }
func (s *Semaphore) Acquire(t *T) error { return nil }
func (s *Semaphore) Release() error     { return nil }

type Barrier struct{}

func NewBarrier(n int) *Barrier           { return nil }
func (b *Barrier) Wait(t *T) (int, error) { return 0, nil }

type Queue[V any] struct{}

func NewQueue[V any](maxsize int) *Queue[V] { return nil }
func (q *Queue[V]) Put(t *T, v V) error     { return nil }
func (q *Queue[V]) Get(t *T) (V, error)     { var v V; return v, nil }
func (q *Queue[V]) PutNowait(v V) error     { return nil }
func (q *Queue[V]) GetNowait() (V, error)   { var v V; return v, nil }
func (q *Queue[V]) TaskDone() error         { return nil }
func (q *Queue[V]) Join(t *T) error         { return nil }
func (q *Queue[V]) Len() int                { return 0 }
func (q *Queue[V]) Shutdown(immediate bool) {}

func ToThread[V any](t *T, fn func(ctx context.Context) (V, error)) (V, error) {
	var v V
	return v, nil
}
func RunInExecutor[V any](owner LoopOwner, fn func(ctx context.Context) (V, error)) *Future[V] {
	return nil
}

type ConcurrentFuture[V any] struct{}

func RunCoroutineThreadsafe[V any](owner LoopOwner, fn func(*T) (V, error)) *ConcurrentFuture[V] {
	return nil
}
func (cf *ConcurrentFuture[V]) Result() (V, error)             { var v V; return v, nil }
func (cf *ConcurrentFuture[V]) Done() bool                     { return false }
func (cf *ConcurrentFuture[V]) Cancel() bool                   { return false }
func (cf *ConcurrentFuture[V]) Wait(ctx context.Context) error { return nil }

// Issue 10.
type Executor interface{ Submit(job func()) error }

func RunInExecutorOn[V any](owner LoopOwner, ex Executor, fn func(ctx context.Context) (V, error)) *Future[V] {
	return nil
}
func Threadsafe[V any](aw AwaitableOf[V]) *ConcurrentFuture[V] { return nil }
func (l *Loop) ExpectExternal() (release func())               { return nil }

func Go[V any](t *T, fn func(ctx context.Context) (V, error)) (V, error) { var v V; return v, nil }
func Recv[V any](t *T, ch <-chan V) (V, bool, error)                     { var v V; return v, false, nil }
func Send[V any](t *T, ch chan<- V, v V) error                           { return nil }

func Run[V any](main func(*T) (V, error), opts ...LoopOption) (V, error) { var v V; return v, nil }

type Runner struct{}

func NewRunner(opts ...LoopOption) *Runner { return nil }
func RunWith[V any](r *Runner, main func(*T) (V, error), opts ...TaskOption) (V, error) {
	var v V
	return v, nil
}
func (r *Runner) Close() error { return nil }

type CancelledError struct{ Msg string }

func (e *CancelledError) Error() string { return "cancelled" }

var (
	ErrCancelled = errors.New("cancelled")
	ErrTimeout   = errors.New("timeout")
)

func IsCancelled(err error) bool { return errors.Is(err, ErrCancelled) }

type ContextVar[V any] struct{}
type ContextVarToken[V any] struct{}

func NewContextVar[V any](name string, def V) *ContextVar[V]       { return nil }
func (v *ContextVar[V]) Get(t *T) V                                { var z V; return z }
func (v *ContextVar[V]) Set(t *T, val V) *ContextVarToken[V]       { return nil }
func (v *ContextVar[V]) Reset(t *T, tok *ContextVarToken[V]) error { return nil }
func (v *ContextVar[V]) Value(ctx context.Context) V               { var z V; return z }

type BoundedGroup struct{}

func BoundedTaskGroup(t *T, limit int, body func(g *BoundedGroup) error) error { return nil }
func SpawnBounded[V any](g *BoundedGroup, fn func(*T) (V, error), opts ...TaskOption) (*Task[V], error) {
	return nil, nil
}

type Locker interface {
	Acquire(t *T) error
	Release() error
}

func WithLock(t *T, lk Locker, fn func() error) error                       { return nil }
func CallFuncOn[V any](t *T, target *Loop, fn func() (V, error)) (V, error) { var v V; return v, nil }

// Added by the hostile probe h31.
type RetryPolicy struct{ MaxAttempts int }
type Attempt struct {
	Number int
	Err    error
}

func Retry[V any](t *T, p RetryPolicy, fn func(t *T, a Attempt) (V, error)) (V, error) {
	var v V
	return v, nil
}

type HedgePolicy struct{ Delay time.Duration }

func Hedge[V any](t *T, p HedgePolicy, fn func(t *T, attempt int) (V, error)) (V, error) {
	var v V
	return v, nil
}

type ExceptionContext struct {
	Message string
	Err     error
}

func (l *Loop) SetExceptionHandler(h func(*Loop, ExceptionContext)) {}
func (l *Loop) SetBeforePoll(fn func())                             {}
func (l *Loop) SetAfterPoll(fn func())                              {}

// Added by the hostile probe h48: the Loop methods documented for any
// goroutine.
type SnapshotOptions struct{}
type LoopSnapshot struct{ Blocked bool }

type Limiter struct{}

func NewLimiter(rate float64, burst int) *Limiter { return nil }
func (l *Limiter) Acquire(t *T) error             { return nil }
func (l *Limiter) Tokens() float64                { return 0 }
func (g *BoundedGroup) Cancel()                   {}

func (l *Loop) AddSignalHandler(sig os.Signal, fn func()) error { return nil }

func (l *Loop) IsRunning() bool                                                     { return false }
func (l *Loop) OnLoopGoroutine() bool                                               { return false }
func (l *Loop) SnapshotThreadsafe(d time.Duration, o SnapshotOptions) *LoopSnapshot { return nil }
func (l *Loop) WriteDump(w io.Writer, d time.Duration) error                        { return nil }
