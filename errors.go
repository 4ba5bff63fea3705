package asyncio

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// Sentinel errors. Every error this package returns for one of these
// conditions satisfies errors.Is with the matching sentinel.
var (
	// ErrCancelled matches every cancellation (asyncio.CancelledError),
	// including a *CancelledError wrapped with %w.
	ErrCancelled = errors.New("asyncio: cancelled")
	// ErrInvalidState matches *InvalidStateError (asyncio.InvalidStateError).
	ErrInvalidState = errors.New("asyncio: invalid state")
	// ErrRuntime matches *RuntimeError, the analogue of the RuntimeError
	// asyncio raises for misuse (awaiting oneself, a stopped loop, ...).
	ErrRuntime = errors.New("asyncio: runtime error")
	// ErrLoopClosed matches the error for any use of a closed loop
	// (asyncio: RuntimeError "Event loop is closed").
	ErrLoopClosed = errors.New("asyncio: Event loop is closed")
	// ErrDeadlock is returned by a loop on virtual time (WithVirtualTime)
	// when it would block forever: nothing ready, no timer, no file
	// descriptor and no executor work in flight.
	ErrDeadlock = errors.New("asyncio: deadlock: the loop would block forever")
	// ErrStalled is matched by the error of the report a loop on virtual
	// time makes when it has waited a grace period for outside work with
	// nothing else to run (*StalledError, WithOutsideGrace).
	ErrStalled = errors.New("asyncio: virtual clock stalled")
	// ErrTaskDone is matched by the cause of a task's Context once the
	// task is done (context.Cause); the cause also wraps the task's error
	// or *CancelledError.
	ErrTaskDone = errors.New("asyncio: task done")
	// ErrClosedChannel is matched by the error of Send on a closed channel
	// (where a Go send would panic).
	ErrClosedChannel = errors.New("asyncio: send on closed channel")
	// ErrInterrupted is what Run and RunWith return when Ctrl-C (SIGINT)
	// interrupted the main task, where asyncio.run raises
	// KeyboardInterrupt. It does not match ErrCancelled. A program that
	// wants the exit status of a shell's interrupted command exits with
	// 130 (128 + SIGINT).
	ErrInterrupted = errors.New("asyncio: interrupted by SIGINT (KeyboardInterrupt)")
)

// CancelledError is asyncio.CancelledError: the error an await returns when
// the awaiting task, or the awaited future, was cancelled. Msg is the
// message given to Cancel ("" when none).
type CancelledError struct {
	Msg string
	// Cause, when set, is why: the cause of the context whose end
	// cancelled the task (RunWith with WithContext, RunContext), so that
	// errors.Is(err, context.Canceled) holds then; or, from Retry, the
	// error of the attempt that swallowed the cancellation. Unwrap
	// returns it.
	Cause error
}

// Error implements the error interface.
func (e *CancelledError) Error() string {
	if e.Msg == "" {
		return "asyncio: cancelled"
	}
	return "asyncio: cancelled: " + e.Msg
}

// Is reports that every CancelledError matches ErrCancelled.
func (e *CancelledError) Is(target error) bool { return target == ErrCancelled }

// Unwrap returns Cause.
func (e *CancelledError) Unwrap() error { return e.Cause }

// IsCancelled reports whether err is (or wraps) a cancellation.
func IsCancelled(err error) bool { return err != nil && errors.Is(err, ErrCancelled) }

// InvalidStateError is asyncio.InvalidStateError: an operation that the
// future's current state does not allow (a result set twice, a result read
// before it is set).
type InvalidStateError struct {
	Msg string
}

// Error implements the error interface.
func (e *InvalidStateError) Error() string { return "asyncio: invalid state: " + e.Msg }

// Is reports that every InvalidStateError matches ErrInvalidState.
func (e *InvalidStateError) Is(target error) bool { return target == ErrInvalidState }

// RuntimeError is the analogue of the RuntimeError asyncio raises for
// misuse. Msg is asyncio's message, word for word where one exists.
type RuntimeError struct {
	Msg string
	// Err, when set, is a more specific sentinel (for example ErrLoopClosed).
	Err error
}

// Error is the message alone, as Python's str() of a RuntimeError.
func (e *RuntimeError) Error() string { return e.Msg }

// Is reports that every RuntimeError matches ErrRuntime.
func (e *RuntimeError) Is(target error) bool { return target == ErrRuntime }

// Unwrap returns the more specific sentinel, if any.
func (e *RuntimeError) Unwrap() error { return e.Err }

func runtimeErrorf(format string, args ...any) *RuntimeError {
	return &RuntimeError{Msg: fmt.Sprintf(format, args...)}
}

func valueErrorf(format string, args ...any) *ValueError {
	return &ValueError{Msg: fmt.Sprintf(format, args...)}
}

func errLoopClosed() *RuntimeError {
	return &RuntimeError{Msg: "Event loop is closed", Err: ErrLoopClosed}
}

// PanicError is what a panic inside a task or a callback becomes: the task
// fails with it, or the exception handler receives it. The loop keeps
// running.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, taken where it was recovered.
	Stack []byte
}

func newPanicError(v any) *PanicError { return &PanicError{Value: v, Stack: debug.Stack()} }

// Error implements the error interface.
func (e *PanicError) Error() string { return fmt.Sprintf("asyncio: panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so errors.Is/As see
// through a panic(err).
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// ErrTimeout matches every *TimeoutError: errors.Is(err, ErrTimeout) is the
// Go spelling of "except TimeoutError" (asyncio.TimeoutError, which is the
// builtin TimeoutError).
var ErrTimeout = errors.New("asyncio: timeout")

// TimeoutError is asyncio's TimeoutError: what Timeout, TimeoutAt, WaitFor
// and AsCompleted return when their deadline passes.
//
// It matches ErrTimeout and context.DeadlineExceeded, but deliberately NOT
// ErrCancelled: asyncio raises TimeoutError *from* the CancelledError, and a
// caller testing IsCancelled must not mistake a timeout for a cancellation
// of its own task. The converted cancellation is kept in Cause instead of
// the Unwrap chain.
type TimeoutError struct {
	// Cause is the *CancelledError the timeout converted (Python's
	// __cause__), or nil.
	Cause error
}

// Error returns "asyncio: timeout".
func (e *TimeoutError) Error() string { return ErrTimeout.Error() }

// Is reports that a TimeoutError matches ErrTimeout and
// context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, so a *TimeoutError satisfies the net.Error-style
// interface{ Timeout() bool } checks.
func (e *TimeoutError) Timeout() bool { return true }

// ErrBrokenBarrier is matched (errors.Is) by every *BrokenBarrierError.
var ErrBrokenBarrier = errors.New("asyncio: broken barrier")

// BrokenBarrierError ports asyncio.BrokenBarrierError, raised by Barrier.Wait
// when the barrier is aborted or reset. Like its Python counterpart (a
// RuntimeError subclass) it matches both ErrBrokenBarrier and ErrRuntime.
type BrokenBarrierError struct{ Msg string }

// Error implements the error interface.
func (e *BrokenBarrierError) Error() string { return "asyncio: " + e.Msg }

// Is reports whether target is ErrBrokenBarrier or ErrRuntime.
func (e *BrokenBarrierError) Is(target error) bool {
	return target == ErrBrokenBarrier || target == ErrRuntime
}

// ErrValue matches every *ValueError.
var ErrValue = errors.New("asyncio: value error")

// ValueError is the analogue of the ValueError asyncio raises for a bad
// argument (an empty Wait, an unknown ReturnWhen). Msg is asyncio's message.
type ValueError struct {
	Msg string
}

// Error implements the error interface.
func (e *ValueError) Error() string { return "asyncio: " + e.Msg }

// Is reports that every ValueError matches ErrValue.
func (e *ValueError) Is(target error) bool { return target == ErrValue }

// ExceptionGroup is asyncio's (Base)ExceptionGroup as raised by a TaskGroup:
// several errors that happened together. Unwrap returns the members, so
// errors.Is and errors.As reach every leaf (also through nested groups).
type ExceptionGroup struct {
	// Msg is the group's message: "unhandled errors in a TaskGroup".
	Msg string
	// Errs are the members: the children's errors in the order their
	// done handlers ran, then the body's error (TG-7).
	Errs []error
}

// Error formats as Python's str(eg) does: "msg (N sub-exceptions)". The
// leaves are in Errs (and in %+v, which lists them as a traceback does).
func (e *ExceptionGroup) Error() string {
	if len(e.Errs) == 1 {
		return e.Msg + " (1 sub-exception)"
	}
	return fmt.Sprintf("%s (%d sub-exceptions)", e.Msg, len(e.Errs))
}

// Unwrap returns the members (Go 1.20 multi-error form).
func (e *ExceptionGroup) Unwrap() []error { return e.Errs }

// Split divides the group by match, for except* (Python's
// BaseExceptionGroup.split): matched holds the leaves for which match is
// true, rest the others. Nested groups keep their structure and message in
// both parts; a part with no leaves is nil, and so is a nested group left
// empty. match is called with each leaf, never with a group (a Go
// predicate built on errors.Is or errors.As would match a group by any of
// its leaves; Python calls a predicate with the groups too). An error that
// merely wraps a group is a leaf. A nil match panics with a *ValueError.
func (e *ExceptionGroup) Split(match func(error) bool) (matched, rest *ExceptionGroup) {
	if match == nil {
		panic(&ValueError{Msg: "ExceptionGroup.Split: nil match function"})
	}
	return e.split(match, true)
}

// Subgroup returns the part of the group that match selects (Python's
// BaseExceptionGroup.subgroup): Split's matched part, nil if none.
func (e *ExceptionGroup) Subgroup(match func(error) bool) *ExceptionGroup {
	if match == nil {
		panic(&ValueError{Msg: "ExceptionGroup.Subgroup: nil match function"})
	}
	matched, _ := e.split(match, false)
	return matched
}

func (e *ExceptionGroup) split(match func(error) bool, wantRest bool) (matched, rest *ExceptionGroup) {
	var m, r []error
	for _, err := range e.Errs {
		if g, ok := err.(*ExceptionGroup); ok {
			gm, gr := g.split(match, wantRest)
			if gm != nil {
				m = append(m, gm)
			}
			if gr != nil {
				r = append(r, gr)
			}
			continue
		}
		if match(err) {
			m = append(m, err)
		} else if wantRest {
			r = append(r, err)
		}
	}
	if len(m) > 0 {
		matched = &ExceptionGroup{Msg: e.Msg, Errs: m}
	}
	if len(r) > 0 {
		rest = &ExceptionGroup{Msg: e.Msg, Errs: r}
	}
	return matched, rest
}

// ErrQueueFull ports asyncio.QueueFull: PutNowait on a full queue.
var ErrQueueFull = errors.New("asyncio: queue full")

// ErrQueueEmpty ports asyncio.QueueEmpty: GetNowait on an empty queue.
var ErrQueueEmpty = errors.New("asyncio: queue empty")

// ErrQueueShutDown ports asyncio.QueueShutDown (3.13): putting on a shut-down
// queue, or getting from one that is shut down and empty.
var ErrQueueShutDown = errors.New("asyncio: queue shut down")

// ErrRetriesExhausted matches every *RetryError: Retry stopped because a
// stopping rule ran out (see RetryPolicy).
var ErrRetriesExhausted = errors.New("asyncio: retries exhausted")

// ErrGroupCancelled matches the error of a LoopGroup main cancelled by
// the group itself: because another loop's main failed (the
// CancelGroupOnFailure policy), or because the group is closing.
var ErrGroupCancelled = errors.New("asyncio: cancelled by the loop group")

// LoopError is the failure of the main of one loop of a LoopGroup: Index
// is the loop's index, Err the main's error (errors.Is and errors.As see
// through it).
type LoopError struct {
	Index int
	Err   error
}

// Error implements the error interface.
func (e *LoopError) Error() string { return fmt.Sprintf("asyncio: loop %d: %v", e.Index, e.Err) }

// Unwrap returns the main's error.
func (e *LoopError) Unwrap() error { return e.Err }
