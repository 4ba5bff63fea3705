// Package hooks lets the module's own tool packages reach loop internals
// that are not public API. Package asyncio fills the variables in at init;
// the types are untyped (any) because this package cannot import asyncio.
package hooks

// SetSuspendHook installs fn on loop (an *asyncio.Loop) to run each time a
// task of the loop suspends at an await, on that task's goroutine, with the
// task (an *asyncio.T) and a function returning the await's location
// ("function file:line" of the first frame outside the library); nil
// removes it. The cancellation tester uses it to count a coroutine's
// suspension points and to cancel it exactly at one of them.
var SetSuspendHook func(loop any, fn func(task any, where func() string))
