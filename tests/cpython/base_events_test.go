package cpython

// CPython 3.13 Lib/test/test_asyncio/test_base_events.py, the part that
// needs no sockets: BaseEventLoopTests and RunningLoopTests through the
// public API of the loop (NewLoop, CallSoon/CallLater/CallAt, RunForever,
// RunUntilComplete, Stop, Close, the exception handler, debug mode, the
// default executor). The many tests that drive BaseEventLoop's private
// methods (_run_once, _add_callback, _process_events, a mocked selector)
// are listed in reasons.tsv. The socket tests are in
// base_events_unix_test.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// panicValue runs fn and returns what it panicked with (nil if it did
// not).
func panicValue(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// slogRecords is a slog handler that keeps every message (and the
// "exception" attribute) at level Warn and above: asyncio's logger.
type slogRecords struct {
	mu   sync.Mutex
	msgs []string
	excs []string
}

func (h *slogRecords) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *slogRecords) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *slogRecords) WithGroup(string) slog.Handler                { return h }
func (h *slogRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	e := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "exception" {
			e = a.Value.String()
		}
		return true
	})
	h.excs = append(h.excs, e)
	return nil
}

// last returns the last message logged and its exception ("", "" if none).
func (h *slogRecords) last() (msg, exception string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.msgs) == 0 {
		return "", ""
	}
	return h.msgs[len(h.msgs)-1], h.excs[len(h.excs)-1]
}

// captureLog is mock.patch('asyncio.base_events.logger'): the default
// slog logger is replaced for the rest of the test.
func captureLog(t *testing.T) *slogRecords {
	h := &slogRecords{}
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	return h
}

// newTestLoop is BaseEventLoopTests.setUp's loop, on a virtual clock,
// closed by the test's cleanup.
func newTestLoop(t *testing.T) *asyncio.Loop {
	l := asyncio.NewTestLoop()
	t.Cleanup(func() { l.Close() })
	return l
}

// runOnce is test_utils.run_once: call_soon(stop); run_forever().
func runOnce(t *testing.T, l *asyncio.Loop) {
	t.Helper()
	l.CallSoon(l.Stop)
	noErr(t, l.RunForever(), "run_forever")
}

func TestBaseEvents_test_close(t *testing.T) {
	l := asyncio.NewLoop()
	check(t, !l.IsClosed(), "not closed")
	noErr(t, l.Close(), "close")
	check(t, l.IsClosed(), "closed")
	// it should be possible to call close() more than once
	noErr(t, l.Close(), "close again")
	noErr(t, l.Close(), "close a third time")
	// operation blocked when the loop is closed
	f := asyncio.NewFuture[int](l)
	check(t, errors.Is(l.RunForever(), asyncio.ErrLoopClosed), "run_forever on a closed loop")
	check(t, errors.Is(l.RunUntilComplete(f), asyncio.ErrLoopClosed), "run_until_complete on a closed loop")
	check(t, errors.Is(l.RunForever(), asyncio.ErrRuntime), "RuntimeError")
}

type dummyExecutor struct{}

func (dummyExecutor) Submit(func()) error {
	return exc("NotImplementedError", "cannot submit into a dummy executor")
}

func TestBaseEvents_test_set_default_executor(t *testing.T) {
	// `assertIs(executor, loop._default_executor)`: the executor set is
	// the one run_in_executor submits to.
	l := newTestLoop(t)
	noErr(t, l.SetDefaultExecutor(dummyExecutor{}), "set_default_executor")
	fut := asyncio.RunInExecutor(l, func(context.Context) (int, error) { return 1, nil })
	err := l.RunUntilComplete(fut)
	raises(t, err, "NotImplementedError", "run_in_executor on the dummy executor")
}

func TestBaseEvents_test_set_default_executor_error(t *testing.T) {
	// A mock is not a ThreadPoolExecutor (TypeError); the Go mistake is a
	// nil executor: a *ValueError, and the default executor unchanged.
	l := newTestLoop(t)
	err := l.SetDefaultExecutor(nil)
	check(t, errors.Is(err, asyncio.ErrValue), "nil executor: ValueError, got ", err)
	fut := asyncio.RunInExecutor(l, func(context.Context) (int, error) { return 7, nil })
	noErr(t, l.RunUntilComplete(fut), "the default executor still runs jobs")
	eq(t, result(t, fut), 7)
}

func TestBaseEvents_test_call_soon(t *testing.T) {
	l := newTestLoop(t)
	called := 0
	h := l.CallSoon(func() { called++ })
	check(t, h != nil && !h.Cancelled(), "a live Handle")
	runOnce(t, l)
	eq(t, called, 1, "the callback ran from the ready queue")
}

func TestBaseEvents_test_call_soon_non_callable(t *testing.T) {
	l := newTestLoop(t)
	l.SetDebug(true)
	var fn func()
	p := panicValue(func() { l.CallSoon(fn) })
	err, _ := p.(error)
	check(t, errors.Is(err, asyncio.ErrValue), "CallSoon(nil) panics with a *ValueError, got ", p)
	if err != nil {
		check(t, regexp.MustCompile(`CallSoon`).MatchString(err.Error()), "the message names the call: ", err)
	}
}

func TestBaseEvents_test_call_later(t *testing.T) {
	l := newTestLoop(t)
	called := false
	h := l.CallLater(10*time.Second, func() { called = true })
	eq(t, h.When(), l.Time()+10*time.Second, "a TimerHandle due in 10 s")
	runOnce(t, l)
	check(t, !called, "scheduled, not ready")
	// `call_later(None, cb)` is a TypeError: a Duration cannot be None.
	h.Cancel()
}

func TestBaseEvents_test_call_later_negative_delays(t *testing.T) {
	l := newTestLoop(t)
	var calls []string
	l.CallLater(-1*time.Second, func() { calls = append(calls, "a") })
	l.CallLater(-2*time.Second, func() { calls = append(calls, "b") })
	runOnce(t, l) // test_utils.run_briefly
	eq(t, calls, []string{"b", "a"})
}

func TestBaseEvents_test_time_and_call_at(t *testing.T) {
	l := newTestLoop(t)
	delay := 100 * ms
	when := l.Time() + delay
	l.CallAt(when, l.Stop)
	t0 := l.Time()
	noErr(t, l.RunForever(), "run_forever")
	dt := l.Time() - t0
	check(t, dt >= delay, "dt ", dt, " >= ", delay)
}

func TestBaseEvents_test_check_thread(t *testing.T) {
	// The loop runs on one goroutine (the "thread"); another goroutine
	// calls CallSoon, CallLater and CallAt on it. CPython raises
	// RuntimeError "Non-thread-safe operation invoked on an event loop
	// other than the current one" in debug mode only; here every mode
	// panics with a *RuntimeError (README divergence).
	for _, debug := range []bool{true, false} {
		l := newTestLoop(t)
		l.SetDebug(debug)
		var got []any
		done := make(chan struct{})
		release := l.ExpectExternal()
		l.CallSoon(func() {
			go func() {
				defer close(done)
				for _, call := range []func(){
					func() { l.CallSoon(func() {}) },
					func() { l.CallLater(60*time.Second, func() {}) },
					func() { l.CallAt(l.Time()+60*time.Second, func() {}) },
				} {
					got = append(got, panicValue(call))
				}
				l.CallSoonThreadsafe(func() { release(); l.Stop() })
			}()
		})
		noErr(t, l.RunForever(), "run_forever")
		<-done
		for i, p := range got {
			err, _ := p.(error)
			check(t, errors.Is(err, asyncio.ErrRuntime), fmt.Sprintf("debug=%v call %d: want a RuntimeError panic, got %v", debug, i, p))
		}
		eq(t, len(got), 3)
	}
}

func TestBaseEvents_test_set_debug(t *testing.T) {
	l := newTestLoop(t)
	l.SetDebug(true)
	check(t, l.Debug(), "debug on")
	l.SetDebug(false)
	check(t, !l.Debug(), "debug off")
}

func TestBaseEvents_test_run_until_complete_type_error(t *testing.T) {
	// run_until_complete('blah'): a nil awaitable is the Go mistake, a
	// *ValueError panic naming the call.
	l := newTestLoop(t)
	p := panicValue(func() { _ = l.RunUntilComplete(nil) })
	err, _ := p.(error)
	check(t, errors.Is(err, asyncio.ErrValue), "RunUntilComplete(nil): got ", p)
	check(t, !l.IsRunning(), "the loop is not left running")
}

func TestBaseEvents_test_run_until_complete_loop(t *testing.T) {
	l := newTestLoop(t)
	task := asyncio.NewFuture[int](l)
	other := newTestLoop(t)
	err := other.RunUntilComplete(task)
	check(t, errors.Is(err, asyncio.ErrValue), "a future of another loop: ValueError, got ", err)
}

func TestBaseEvents_test_default_exc_handler_callback(t *testing.T) {
	l := newTestLoop(t)
	log := captureLog(t)
	zeroError := func(fut *asyncio.Future[bool]) {
		fut.SetResult(true)
		panic(exc("ZeroDivisionError"))
	}
	re := regexp.MustCompile(`^Exception in callback .*func`)
	// call_soon (events.Handle)
	fut := asyncio.NewFuture[bool](l)
	l.CallSoon(func() { zeroError(fut) })
	fut.AddDoneCallback(func() { l.Stop() })
	noErr(t, l.RunForever(), "run_forever")
	msg, e := log.last()
	check(t, re.MatchString(msg), "logged ", msg)
	check(t, regexp.MustCompile(`ZeroDivisionError`).MatchString(e), "with the error: ", e)
	// call_later (events.TimerHandle)
	fut = asyncio.NewFuture[bool](l)
	l.CallLater(10*ms, func() { zeroError(fut) })
	fut.AddDoneCallback(func() { l.Stop() })
	log.msgs, log.excs = nil, nil
	noErr(t, l.RunForever(), "run_forever")
	msg, e = log.last()
	check(t, re.MatchString(msg), "logged ", msg)
	check(t, regexp.MustCompile(`ZeroDivisionError`).MatchString(e), "with the error: ", e)
}

func TestBaseEvents_test_default_exc_handler_coro(t *testing.T) {
	// Future.__del__ after `fut = None; gc_collect()` is, here, the loop's
	// Close, which reports a failed task whose error nobody read.
	l := asyncio.NewTestLoop()
	log := captureLog(t)
	fut := asyncio.CreateTask(l, func(tk *asyncio.T) (struct{}, error) {
		if err := asyncio.Sleep(tk, 10*ms); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, exc("ZeroDivisionError")
	})
	fut.AddDoneCallback(func() { l.Stop() })
	noErr(t, l.RunForever(), "run_forever")
	noErr(t, l.Close(), "close")
	msg, e := log.last()
	check(t, regexp.MustCompile(`exception was never retrieved`).MatchString(msg), "logged ", msg)
	check(t, regexp.MustCompile(`ZeroDivisionError`).MatchString(e), "with the error: ", e)
}

// zeroError is test_set_exc_handler_custom's zero_error: 1/0.
func zeroError() { panic(exc("ZeroDivisionError")) }

func TestBaseEvents_test_set_exc_handler_custom(t *testing.T) {
	l := newTestLoop(t)
	l.SetDebug(true)
	runLoop := func() *asyncio.Handle {
		h := l.CallSoon(zeroError)
		runOnce(t, l)
		return h
	}
	var calls []asyncio.ExceptionContext
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) { calls = append(calls, c) })
	h := runLoop()
	if eq(t, len(calls), 1, "handler calls"); len(calls) == 1 {
		c := calls[0]
		check(t, regexp.MustCompile(`^Exception in callback .*zeroError`).MatchString(c.Message), "message ", c.Message)
		check(t, c.Handle == h, "the context's handle is the callback's")
		check(t, errors.Is(c.Err, exc("ZeroDivisionError")) || regexp.MustCompile(`ZeroDivisionError`).MatchString(fmt.Sprint(c.Err)), "exception ", c.Err)
	}
	calls = nil
	l.SetExceptionHandler(nil)
	log := captureLog(t)
	runLoop()
	msg, e := log.last()
	check(t, regexp.MustCompile(`^Exception in callback .*zero`).MatchString(msg), "logged ", msg)
	check(t, regexp.MustCompile(`ZeroDivisionError`).MatchString(e), "with the error: ", e)
	eq(t, len(calls), 0, "the old handler is not called")
}

func TestBaseEvents_test_set_exc_handler_broken(t *testing.T) {
	// A handler that raises is a handler that panics.
	l := newTestLoop(t)
	l.SetExceptionHandler(func(*asyncio.Loop, asyncio.ExceptionContext) { panic(exc("AttributeError", "spam")) })
	log := captureLog(t)
	l.CallSoon(func() { panic(exc("ZeroDivisionError")) })
	runOnce(t, l)
	found := false
	log.mu.Lock()
	for i, m := range log.msgs {
		if m == "Unhandled error in exception handler" && regexp.MustCompile(`AttributeError`).MatchString(log.excs[i]) {
			found = true
		}
	}
	log.mu.Unlock()
	check(t, found, "logged 'Unhandled error in exception handler' with the AttributeError: ", log.msgs)
}

func TestBaseEvents_test_create_named_task_with_default_factory(t *testing.T) {
	l := asyncio.NewLoop()
	defer l.Close()
	task := asyncio.CreateTask(l, func(*asyncio.T) (struct{}, error) { return struct{}{}, nil }, asyncio.WithName("test_task"))
	eq(t, task.Name(), "test_task")
	noErr(t, l.RunUntilComplete(task), "run")
}

func TestBaseEvents_test_run_once(t *testing.T) {
	l := newTestLoop(t)
	count := 0
	l.CallSoon(func() { count++ })
	runOnce(t, l)
	eq(t, count, 1)
}

func TestBaseEvents_test_run_forever_pre_stopped(t *testing.T) {
	// The old idiom: stop() before run_forever() runs one iteration,
	// which polls without waiting (select(0)): a timer due later does
	// not run and the (virtual) clock does not move.
	l := newTestLoop(t)
	ran, late := false, false
	l.CallSoon(func() { ran = true })
	l.CallLater(time.Second, func() { late = true })
	t0 := l.Time()
	l.Stop()
	noErr(t, l.RunForever(), "run_forever")
	check(t, ran, "the ready callback ran")
	check(t, !late, "the timer did not")
	eq(t, l.Time(), t0, "no wait")
}

func TestBaseEvents_test_log_slow_callbacks(t *testing.T) {
	l := newTestLoop(t)
	log := captureLog(t)
	l.SetDebug(true)
	l.SetSlowCallbackDuration(0)
	// slow callback
	stopLoopCb := func() { l.Stop() }
	l.CallSoon(stopLoopCb)
	noErr(t, l.RunForever(), "run_forever")
	msg, _ := log.last()
	check(t, regexp.MustCompile(`^Executing .*func.* took .* seconds$`).MatchString(msg), "callback: ", msg)
	// slow task
	asyncio.CreateTask(l, func(tk *asyncio.T) (struct{}, error) { tk.Loop().Stop(); return struct{}{}, nil }, asyncio.WithName("stop_loop_coro"))
	noErr(t, l.RunForever(), "run_forever")
	msg, _ = log.last()
	check(t, regexp.MustCompile(`^Executing <Task.*stop_loop_coro.*> took .* seconds$`).MatchString(msg), "task: ", msg)
}

func TestBaseEvents_test_running_loop_within_a_loop(t *testing.T) {
	// run_forever of a loop from a task of another running loop raises
	// RuntimeError "Cannot run the event loop while another loop is
	// running"; the inner loop is left as it was.
	inner := asyncio.NewLoop()
	defer inner.Close()
	outer := asyncio.NewLoop()
	defer outer.Close()
	ran := false
	inner.CallSoon(func() { ran = true; inner.Stop() })
	task := asyncio.CreateTask(outer, func(*asyncio.T) (struct{}, error) { return struct{}{}, inner.RunForever() })
	err := outer.RunUntilComplete(task)
	check(t, errors.Is(err, asyncio.ErrRuntime), "run_forever of another loop inside a running loop is a RuntimeError: ", err)
	check(t, err != nil && strings.Contains(err.Error(), "while another loop is running"), "the message: ", err)
	check(t, !ran && !inner.IsRunning(), "the inner loop did not run")
	// The inner loop still works on its own afterwards.
	noErr(t, inner.RunForever(), "run_forever of the inner loop")
	check(t, ran, "the inner loop ran its callback")
}

func TestBaseEvents_test_env_var_debug(t *testing.T) {
	// PYTHONASYNCIODEBUG is GOASYNCIODEBUG (asyncio.DebugEnv), read by
	// every NewLoop: empty or unset, no debug mode; non-empty, debug mode.
	// (-E and -X dev are Python interpreter flags.)
	for _, c := range []struct {
		value string
		want  bool
	}{{"", false}, {"1", true}} {
		t.Setenv(asyncio.DebugEnv, c.value)
		l := asyncio.NewLoop()
		eq(t, l.Debug(), c.want, asyncio.DebugEnv+"="+c.value)
		noErr(t, l.Close(), "close")
	}
}
