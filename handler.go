package asyncio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/go-asyncio/asyncio/internal/gid"
	"github.com/go-asyncio/asyncio/internal/hooks"
)

// ExceptionContext describes an error that no caller can receive: a panic
// in a callback, a task's error nobody retrieved, a task pending when its
// loop closed (asyncio's exception handler context dict).
type ExceptionContext struct {
	// Message is asyncio's message, e.g. "Exception in callback f" or
	// "Task exception was never retrieved".
	Message string
	// Err is the error, if any (asyncio's "exception" key).
	Err error
	// Handle is the callback's handle, if any.
	Handle *Handle
	// Future is the future concerned, if any: for "exception was never
	// retrieved", the failed *Future or the task's *T (asyncio's "future"
	// key), unless it was already collected (FUT-10).
	Future Awaitable
	// Task is the task concerned, if any.
	Task *T
	// Transport is the transport concerned, if any (asyncio's "transport"
	// key): an aio.Transport, as for "Unhandled exception in
	// client_connected_cb".
	Transport any
	// Protocol is the protocol concerned, if any (asyncio's "protocol"
	// key): an aio.Protocol, as for "Fatal error: protocol.data_received()
	// call failed.".
	Protocol any
	// Stack is a goroutine stack that explains the report, if any: for
	// "Event loop blocked ...", the stack of the goroutine holding the
	// loop, taken while it was blocked (its top is the blocking call).
	Stack string
	// CreatedAt is, in debug mode, where the task or future concerned was
	// created (asyncio's source_traceback): for "exception was never
	// retrieved" and "Task was destroyed but it is pending!".
	CreatedAt string
	// Origin is, for a task's error nobody retrieved, the task as asyncio
	// prints it with its coroutine function and where that is defined
	// ("<Task finished name='w' coro=<main.worker() done, defined at
	// main.go:12>>"), and in debug mode where it was created.
	Origin string
	// AwaitChain is, in debug mode, the await graph of that task when it
	// failed (FormatCallGraph: who was awaiting it).
	AwaitChain string
	// Context carries the ContextVar values of the task concerned (when it
	// failed, for an error nobody retrieved): asyncio runs the handler in
	// that task's context, here the handler reads v.Value(ctx.Context).
	// CallExceptionHandler fills it from Task when it is nil.
	Context context.Context
}

// SetExceptionHandler sets the handler called with errors nobody else
// can receive (asyncio's set_exception_handler); nil restores the default,
// which logs through log/slog. A panic in the handler is logged by the
// default handler and does not stop the loop.
//
// The handler is called on the goroutine running the loop, except for the
// watchdog's "Event loop blocked" report, which comes from the watchdog's
// goroutine while the loop is blocked: a handler must not touch the loop
// (it may record and log). Calls never overlap: a report waits until the
// handler has returned from the previous one, except a report made from
// inside the handler's call, which calls the handler again at once.
func (l *Loop) SetExceptionHandler(h func(*Loop, ExceptionContext)) {
	if h == nil {
		l.exceptionHandler.Store(nil)
		return
	}
	l.exceptionHandler.Store(&h)
}

// CallExceptionHandler passes ctx to the loop's exception handler
// (asyncio's call_exception_handler).
func (l *Loop) CallExceptionHandler(ctx ExceptionContext) {
	if ctx.Context == nil && ctx.Task != nil {
		ctx.Context = ctx.Task.baseContext()
	}
	me := gid.Token()
	if l.handlerOwner.Load() != me {
		l.handlerMu.Lock()
		l.handlerOwner.Store(me)
		defer func() {
			l.handlerOwner.Store(0)
			l.handlerMu.Unlock()
		}()
	}
	// else: a report made from inside the handler's call (the handler
	// reports, or what it calls does): as asyncio, the handler is called
	// again; waiting for the lock would wait for itself.
	if l.exceptionTap != nil {
		l.exceptionTap(ctx)
	}
	h := l.exceptionHandler.Load()
	if h == nil {
		l.DefaultExceptionHandler(ctx)
		return
	}
	defer func() {
		if r := recover(); r != nil {
			l.DefaultExceptionHandler(ExceptionContext{
				Message: "Unhandled error in exception handler",
				Err:     newPanicError(r),
			})
			l.DefaultExceptionHandler(ctx)
		}
	}()
	(*h)(l, ctx)
}

// DefaultExceptionHandler logs ctx at level Error through log/slog
// (asyncio's default_exception_handler): the message, then the error and
// the objects concerned as attributes.
func (l *Loop) DefaultExceptionHandler(ctx ExceptionContext) {
	msg := ctx.Message
	if msg == "" {
		msg = "Unhandled exception in event loop"
	}
	var attrs []any
	if ctx.Err != nil {
		attrs = append(attrs, slog.String("exception", ctx.Err.Error()))
		if p := (*PanicError)(nil); errors.As(ctx.Err, &p) {
			attrs = append(attrs, slog.String("stack", string(p.Stack)))
		}
	}
	if ctx.Task != nil {
		attrs = append(attrs, slog.String("task", ctx.Task.String()))
	}
	if ctx.Future != nil {
		attrs = append(attrs, slog.String("future", fmt.Sprint(ctx.Future)))
	}
	if ctx.Handle != nil && ctx.Handle.fn != nil { // (a Handle made for a report may name no function)
		attrs = append(attrs, slog.String("handle", funcName(ctx.Handle.fn)))
	}
	if ctx.Transport != nil {
		attrs = append(attrs, slog.String("transport", fmt.Sprint(ctx.Transport)))
	}
	if ctx.Protocol != nil {
		// asyncio logs the protocol's repr; a protocol without a String
		// method is named by its type (its fields may be anything).
		s, ok := ctx.Protocol.(fmt.Stringer)
		name := fmt.Sprintf("%T", ctx.Protocol)
		if ok {
			name = s.String()
		}
		attrs = append(attrs, slog.String("protocol", name))
	}
	if ctx.Stack != "" {
		attrs = append(attrs, slog.String("stack", ctx.Stack))
	}
	if ctx.CreatedAt != "" {
		attrs = append(attrs, slog.String("created_at", ctx.CreatedAt))
	}
	if ctx.Origin != "" {
		attrs = append(attrs, slog.String("origin", ctx.Origin))
	}
	if ctx.AwaitChain != "" {
		attrs = append(attrs, slog.String("await_chain", ctx.AwaitChain))
	}
	slog.Error(msg, attrs...)
}

func init() {
	hooks.RegisterExceptionTap(func(l *Loop, fn func(ExceptionContext)) { l.exceptionTap = fn })
}
