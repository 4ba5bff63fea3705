// Package hooks lets the module's own tool packages (cancelcheck, aio) reach
// what package asyncio keeps unexported (its observers, a tap on the
// exception handler's reports, whether a goroutine runs a loop), without
// widening the public API. Package asyncio registers the function
// at init; this package cannot import asyncio (asyncio imports it), so the
// registration is generic: the function is stored once, with its types,
// and SetSuspendHook's type arguments, inferred at the call site from
// *asyncio.Loop and a func(*asyncio.T, ...), must match them. A caller
// therefore needs no type assertion, and a mismatch is a panic naming both
// types at the first call, not a silent no-op.
package hooks

import "fmt"

// suspendHookSetter is what package asyncio registered: a
// func(*asyncio.Loop, func(*asyncio.T, func() string)).
var suspendHookSetter any

// Register records set as the implementation of SetSuspendHook for loops
// of type L and tasks of type T. Package asyncio calls it at init.
func Register[L, T any](set func(loop *L, fn func(task *T, where func() string))) {
	suspendHookSetter = set
}

// SetSuspendHook installs fn on loop to run each time a task of the loop
// suspends at an await, on that task's goroutine, with the task and a
// function returning the await's location ("function file:line" of the
// first frame outside the library); nil removes it. The cancellation tester
// uses it to count a coroutine's suspension points and to cancel it exactly
// at one of them.
func SetSuspendHook[L, T any](loop *L, fn func(task *T, where func() string)) {
	set, ok := suspendHookSetter.(func(*L, func(*T, func() string)))
	if !ok {
		panic(fmt.Sprintf("hooks.SetSuspendHook: registered %T, called for (*%T, func(*%T, func() string))",
			suspendHookSetter, *new(L), *new(T)))
	}
	set(loop, fn)
}

// closedWorldSetter is what package asyncio registered: a
// func(*asyncio.Loop, func(fd int) bool).
var closedWorldSetter any

// RegisterClosedWorld records set as the implementation of SetClosedWorld
// for loops of type L. Package asyncio calls it at init.
func RegisterClosedWorld[L any](set func(loop *L, isClosedWorld func(fd int) bool)) {
	closedWorldSetter = set
}

// SetClosedWorld tells loop which of its file descriptors belong to a
// closed world: a simulated network (package aio) whose descriptors
// become ready only through the loop's own callbacks and timers. A loop on
// virtual time that waits with nothing ready, no timer, no outside work,
// and only such descriptors can never be woken, and reports ErrDeadlock.
// nil removes it.
func SetClosedWorld[L any](loop *L, isClosedWorld func(fd int) bool) {
	set, ok := closedWorldSetter.(func(*L, func(int) bool))
	if !ok {
		panic(fmt.Sprintf("hooks.SetClosedWorld: registered %T, called for (*%T, func(int) bool)", closedWorldSetter, *new(L)))
	}
	set(loop, isClosedWorld)
}

// exceptionTapSetter is what package asyncio registered: a
// func(*asyncio.Loop, func(asyncio.ExceptionContext)).
var exceptionTapSetter any

// RegisterExceptionTap records set as the implementation of
// SetExceptionTap for loops of type L and exception contexts of type C.
// Package asyncio calls it at init.
func RegisterExceptionTap[L, C any](set func(loop *L, fn func(ctx C))) {
	exceptionTapSetter = set
}

// SetExceptionTap installs fn on loop to see every report made to the
// loop's exception handler, before the handler (the one set, or the
// default) gets it, whatever handler the code under test sets; nil
// removes it. It is called as the handler is, one report at a time. The
// cancellation tester records swallowed cancellations with it.
func SetExceptionTap[L, C any](loop *L, fn func(ctx C)) {
	set, ok := exceptionTapSetter.(func(*L, func(C)))
	if !ok {
		panic(fmt.Sprintf("hooks.SetExceptionTap: registered %T, called for (*%T, func(%T))", exceptionTapSetter, *new(L), *new(C)))
	}
	set(loop, fn)
}

// callerRunsALoop is what package asyncio registered: whether the calling
// goroutine holds a running loop.
var callerRunsALoop func() bool

// RegisterCallerRunsALoop records fn as the implementation of
// CallerRunsALoop. Package asyncio calls it at init.
func RegisterCallerRunsALoop(fn func() bool) { callerRunsALoop = fn }

// CallerRunsALoop reports whether the calling goroutine runs a loop (one
// of its tasks or callbacks, or its driver): package aio refuses a net.Conn
// call that would block such a goroutine, and with it that whole loop.
func CallerRunsALoop() bool { return callerRunsALoop() }

// isVirtual is what package asyncio registered: a func(*asyncio.Loop) bool.
var isVirtual any

// RegisterIsVirtual records fn as the implementation of IsVirtual for
// loops of type L. Package asyncio calls it at init.
func RegisterIsVirtual[L any](fn func(loop *L) bool) { isVirtual = fn }

// IsVirtual reports whether loop runs on virtual time (WithVirtualTime):
// package aio counts a net.Conn deadline on the loop's clock there.
func IsVirtual[L any](loop *L) bool {
	fn, ok := isVirtual.(func(*L) bool)
	if !ok {
		panic(fmt.Sprintf("hooks.IsVirtual: registered %T, called for *%T", isVirtual, *new(L)))
	}
	return fn(loop)
}

// prePollAdder is what package asyncio registered: a
// func(*asyncio.Loop, func()) func().
var prePollAdder any

// RegisterPrePoll records add as the implementation of AddPrePoll for
// loops of type L. Package asyncio calls it at init.
func RegisterPrePoll[L any](add func(loop *L, fn func()) (remove func())) { prePollAdder = add }

// AddPrePoll has loop call fn at the start of each poll step of an
// iteration, before SetBeforePoll's hook and before the poll's timeout is
// computed, and returns the function that removes it. A simulated network
// (package aio) moves what its applications wrote during the last
// iteration there, as a kernel moves loopback data inside send(): the
// receivers are ready in the very poll that follows. fn runs on the loop's
// goroutine and must not run user code.
func AddPrePoll[L any](loop *L, fn func()) (remove func()) {
	add, ok := prePollAdder.(func(*L, func()) func())
	if !ok {
		panic(fmt.Sprintf("hooks.AddPrePoll: registered %T, called for *%T", prePollAdder, *new(L)))
	}
	return add(loop, fn)
}
