package asyncio

import (
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
)

// CancelledError is asyncio.CancelledError: the error an await returns when
// the awaiting task, or the awaited future, was cancelled. Msg is the
// message given to Cancel ("" when none).
type CancelledError struct {
	Msg string
}

// NewCancelledError returns a CancelledError carrying msg.
func NewCancelledError(msg string) *CancelledError { return &CancelledError{Msg: msg} }

// Error implements the error interface.
func (e *CancelledError) Error() string {
	if e.Msg == "" {
		return "asyncio: cancelled"
	}
	return "asyncio: cancelled: " + e.Msg
}

// Is reports that every CancelledError matches ErrCancelled.
func (e *CancelledError) Is(target error) bool { return target == ErrCancelled }

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

// Error implements the error interface.
func (e *RuntimeError) Error() string { return "asyncio: " + e.Msg }

// Is reports that every RuntimeError matches ErrRuntime.
func (e *RuntimeError) Is(target error) bool { return target == ErrRuntime }

// Unwrap returns the more specific sentinel, if any.
func (e *RuntimeError) Unwrap() error { return e.Err }

func runtimeErrorf(format string, args ...any) *RuntimeError {
	return &RuntimeError{Msg: fmt.Sprintf(format, args...)}
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
