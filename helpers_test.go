package asyncio

// The harness shared by the package's tests: one event recorder, one way
// to run a test's main task, one error describer, and a few small helpers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ---- the event recorder

// eventLog is the event recorder of every test: tests log what happens and
// compare the whole log with checkEvents. It is safe for concurrent use
// (executor jobs and foreign goroutines log too). With clock set, each
// line starts with the loop's time ("1.5s inner done"); the zero value
// logs bare lines.
type eventLog struct {
	mu     sync.Mutex
	clock  *Loop
	events []string
}

func (r *eventLog) log(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if r.clock != nil {
		line = r.clock.Time().String() + " " + line
	}
	r.mu.Lock()
	r.events = append(r.events, line)
	r.mu.Unlock()
}

// logFn returns a callback that logs name.
func (r *eventLog) logFn(name string) func() { return func() { r.log("%s", name) } }

// snapshot returns a copy of the lines logged so far.
func (r *eventLog) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// checkEvents fails the test unless r holds exactly the lines of want.
func checkEvents(t *testing.T, want []string, r *eventLog) {
	t.Helper()
	if d := cmp.Diff(want, r.snapshot()); d != "" {
		t.Errorf("event log mismatch (-want +got):\n%s", d)
	}
}

// checkLines fails the test unless got holds exactly the lines of want.
func checkLines(t *testing.T, want, got []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines mismatch (-want +got):\n%s", d)
	}
}

// handlerLog installs an exception handler that logs "handler: <message>"
// and keeps the contexts.
func handlerLog(l *Loop, r *eventLog) *[]ExceptionContext {
	var ctxs []ExceptionContext
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		r.log("handler: %s", c.Message)
		ctxs = append(ctxs, c)
	})
	return &ctxs
}

// ---- running a test's tasks

// runMain runs main as task "main" on a fresh virtual-time loop until it is
// done, logs exception-handler calls, closes the loop and returns the log
// and main's error.
func runMain(t *testing.T, main func(tk *T, r *eventLog) error) (*eventLog, error) {
	t.Helper()
	l := NewTestLoop()
	r := &eventLog{clock: l}
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		r.log("handler: %s: %v", c.Message, c.Err)
	})
	task := CreateTask(l, func(tk *T) (struct{}, error) { return struct{}{}, main(tk, r) }, WithName("main"))
	if err := l.RunUntilComplete(task); err != nil && !task.Done() {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	err := task.Err()
	if cerr := l.Close(); cerr != nil {
		t.Fatalf("Close: %v", cerr)
	}
	return r, err
}

// runVirtual runs main as asyncio.Run's main task on a virtual-time loop
// and fails the test if it errs (ErrDeadlock included: a lost wake-up
// shows up as a deadlock).
func runVirtual(t *testing.T, main func(tk *T) error) {
	t.Helper()
	if _, err := Run(func(tk *T) (struct{}, error) { return struct{}{}, main(tk) }, WithVirtualTime()); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// startTask creates a task named name running fn.
func startTask(owner LoopOwner, name string, fn func(tk *T) error, opts ...TaskOption) *Task[struct{}] {
	return CreateTask(owner, func(tk *T) (struct{}, error) { return struct{}{}, fn(tk) }, append([]TaskOption{WithName(name)}, opts...)...)
}

// awaitAll awaits every task.
func awaitAll(tk *T, tasks ...*Task[struct{}]) {
	for _, task := range tasks {
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(task)
	}
}

// sleeper is a child that logs its start and outcome around Sleep(d).
func sleeper(r *eventLog, name string, d time.Duration, result int) func(*T) (int, error) {
	return func(tk *T) (int, error) {
		r.log("%s start", name)
		if err := Sleep(tk, d); err != nil {
			r.log("%s: %v", name, err)
			return 0, err
		}
		r.log("%s done", name)
		return result, nil
	}
}

// failer is a child that fails with err after d.
func failer(r *eventLog, name string, d time.Duration, err error) func(*T) (int, error) {
	return func(tk *T) (int, error) {
		r.log("%s start", name)
		if e := Sleep(tk, d); e != nil {
			r.log("%s: %v", name, e)
			return 0, e
		}
		r.log("%s fails", name)
		return 0, err
	}
}

// mustClose closes l and fails the test if Close errs.
func mustClose(t *testing.T, l *Loop) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// runOne runs exactly one iteration with poll timeout 0 (LOOP-8).
func runOne(t *testing.T, l *Loop) {
	t.Helper()
	l.Stop()
	if err := l.RunForever(); err != nil {
		t.Fatalf("RunForever: %v", err)
	}
}

// waitUntilSleeping returns once l is blocked in its poll (white box: the
// sleep mode is set under the threadsafe mutex right before blocking).
func waitUntilSleeping(l *Loop) {
	for {
		l.threadsafeMu.Lock()
		mode := l.sleepMode
		l.threadsafeMu.Unlock()
		if mode != sleepAwake {
			return
		}
		runtime.Gosched()
	}
}

// fromForeignGoroutine calls call on a new goroutine and waits for it, and
// returns what call panicked with (nil if it returned). The caller, which
// runs the loop, stays blocked meanwhile: the call is made while the loop
// runs, by a goroutine that is not running it, and nothing races.
func fromForeignGoroutine(call func()) any {
	out := make(chan any)
	go func() {
		var v any
		defer func() { out <- v }()
		defer func() { v = recover() }()
		call()
	}()
	return <-out
}

// ---- describing errors

// describe renders an error for event logs, the one way every test does:
//
//	nil                          <nil>
//	*CancelledError              CancelledError("msg")
//	*InvalidStateError           InvalidStateError("msg")
//	*RuntimeError                RuntimeError("msg")
//	*ValueError                  ValueError("msg")
//	*BrokenBarrierError          BrokenBarrierError("msg")
//	*TimeoutError                TimeoutError(cause=<the cause, described>)
//	*ExceptionGroup              ExceptionGroup("msg", [<each member, described>])
//	ErrQueueFull, ErrQueueEmpty  QueueFull, QueueEmpty
//	ErrQueueShutDown             QueueShutDown
//	anything else                <Go type>("<Error()>"), e.g. *errors.errorString("boom"),
//	                             then " wrapping <what it wraps, described>" if it wraps one error
//
// The package's error types print as asyncio's exceptions do (the name and
// the message, as Python's repr), the queue sentinels as asyncio's
// exception classes. It looks at err itself before what err wraps, so a
// wrapped CancelledError shows as its wrapper wrapping CancelledError("…").
func describe(err error) string {
	switch e := err.(type) {
	case nil:
		return "<nil>"
	case *CancelledError:
		return fmt.Sprintf("CancelledError(%q)", e.Msg)
	case *InvalidStateError:
		return fmt.Sprintf("InvalidStateError(%q)", e.Msg)
	case *RuntimeError:
		return fmt.Sprintf("RuntimeError(%q)", e.Msg)
	case *ValueError:
		return fmt.Sprintf("ValueError(%q)", e.Msg)
	case *BrokenBarrierError:
		return fmt.Sprintf("BrokenBarrierError(%q)", e.Msg)
	case *TimeoutError:
		return "TimeoutError(cause=" + describe(e.Cause) + ")"
	case *ExceptionGroup:
		members := make([]string, len(e.Errs))
		for i, m := range e.Errs {
			members[i] = describe(m)
		}
		return fmt.Sprintf("ExceptionGroup(%q, [%s])", e.Msg, strings.Join(members, ", "))
	}
	switch err {
	case ErrQueueFull:
		return "QueueFull"
	case ErrQueueEmpty:
		return "QueueEmpty"
	case ErrQueueShutDown:
		return "QueueShutDown"
	}
	s := fmt.Sprintf("%T(%q)", err, err.Error())
	if inner := errors.Unwrap(err); inner != nil {
		s += " wrapping " + describe(inner)
	}
	return s
}

// timeoutTraits describes err, then checks what Go code matches a timeout
// by: errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded),
// and not IsCancelled(err) (the scope's own cancellation must not leak out
// as one, TMO-6). These are properties each timeout test asserts at its
// call site, not a second rendering.
func timeoutTraits(err error) string {
	return fmt.Sprintf("%s is(ErrTimeout)=%v is(DeadlineExceeded)=%v cancelled=%v",
		describe(err), errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded), IsCancelled(err))
}

// ---- other helpers

// Errors children fail with.
var (
	errBoom = errors.New("boom")
	errKey  = errors.New("key")
	errMy   = errors.New("my")
)

// doneFuture returns a future that already holds v.
func doneFuture(l LoopOwner, v string) *Future[string] {
	f := NewFuture[string](l)
	f.SetResult(v)
	return f
}

// mustPanic runs f and returns the value it panicked with; it fails the
// test if f returns normally.
func mustPanic(t *testing.T, what string, f func()) (v any) {
	t.Helper()
	defer func() {
		v = recover()
		if v == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
	return nil
}

var reprAddr = regexp.MustCompile(` at 0x[0-9a-f]+`)

// repr normalises a String() for comparison with CPython's repr: the
// address becomes ADDR.
func repr(s fmt.Stringer) string {
	return reprAddr.ReplaceAllString(s.String(), " at ADDR")
}

// slogCapture is a slog.Handler that keeps "LEVEL message key=value ..."
// lines (stack attributes shortened to "stack=...").
type slogCapture struct {
	mu    sync.Mutex
	lines []string
}

func (h *slogCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *slogCapture) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *slogCapture) WithGroup(string) slog.Handler            { return h }

func (h *slogCapture) Handle(_ context.Context, rec slog.Record) error {
	if strings.Contains(rec.Message, "exception was never retrieved") {
		// Reports about failed tasks of earlier tests, made whenever the
		// GC collects them (FUT-10): not this test's business.
		return nil
	}
	s := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "stack" {
			s += " stack=..."
		} else {
			s += " " + a.Key + "=" + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, s)
	h.mu.Unlock()
	return nil
}

func (h *slogCapture) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	lines := h.lines
	h.lines = nil
	return lines
}

// captureSlog routes the default slog logger to a capture until the test
// ends.
func captureSlog(t *testing.T) *slogCapture {
	old := slog.Default()
	h := &slogCapture{}
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
	return h
}

// ---- helper processes

// helperEnv names the helper-process scenario the test binary runs
// instead of its tests (TestMain checks it first).
const helperEnv = "GO_ASYNCIO_HELPER"

// helperProcesses maps a scenario to the function whose result is the
// helper process's exit status. Tests that need a process of their own
// (to see it die of a signal, say) register one in an init function.
var helperProcesses = map[string]func() int{}

// runHelper runs the test binary as a helper process for scenario and
// returns its combined output and its exit error.
func runHelper(scenario string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+scenario)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitForPendingSignals gives a signal sent to the process itself time to
// arrive (a failing helper's bound, not a timing assertion: a signal that
// ends the process does so long before).
func waitForPendingSignals() {
	for range 200 {
		time.Sleep(10 * time.Millisecond)
	}
}

// removeSignal is l.RemoveSignalHandler(sig) for a valid signal: whether a
// handler was removed (an error fails the test).
func removeSignal(t *testing.T, l *Loop, sig os.Signal) bool {
	t.Helper()
	removed, err := l.RemoveSignalHandler(sig)
	if err != nil {
		t.Errorf("RemoveSignalHandler(%v): %v", sig, err)
	}
	return removed
}
