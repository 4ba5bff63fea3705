package asyncio

// The harness shared by the package's tests: one event recorder, one way
// to run a test's main task, one error describer, and a few small helpers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
func startTask(owner LoopOwner, name string, fn func(tk *T) error) *Task[struct{}] {
	return CreateTask(owner, func(tk *T) (struct{}, error) { return struct{}{}, fn(tk) }, WithName(name))
}

// awaitAll awaits every task.
func awaitAll(tk *T, tasks ...*Task[struct{}]) {
	for _, task := range tasks {
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

// ---- describing errors (to be unified)

// errMsg returns err's message, "<nil>" for nil.
func errMsg(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// rtMsg returns the Msg of a *RuntimeError, or a description of err.
func rtMsg(err error) string {
	var re *RuntimeError
	if errors.As(err, &re) {
		return re.Msg
	}
	return "not a RuntimeError: " + errMsg(err)
}

// syncErr names an error for event logs.
func syncErr(err error) string {
	var ce *CancelledError
	var ve *ValueError
	var re *RuntimeError
	var be *BrokenBarrierError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ce):
		return "CE(" + ce.Msg + ")"
	case errors.As(err, &be):
		return "BrokenBarrierError: " + be.Msg
	case errors.As(err, &ve):
		return "ValueError: " + ve.Msg
	case errors.As(err, &re):
		return "RuntimeError: " + re.Msg
	case errors.Is(err, ErrQueueShutDown):
		return "QueueShutDown"
	case errors.Is(err, ErrQueueFull):
		return "QueueFull"
	case errors.Is(err, ErrQueueEmpty):
		return "QueueEmpty"
	}
	return err.Error()
}

// describe renders an error for event logs: its concrete type and its
// message (Msg for the package's own errors).
func describe(err error) string {
	var ise *InvalidStateError
	var ce *CancelledError
	switch {
	case err == nil:
		return "<nil>"
	case errors.As(err, &ise):
		return fmt.Sprintf("%T %q", err, ise.Msg)
	case errors.As(err, &ce):
		return fmt.Sprintf("%T %q", err, ce.Msg)
	}
	return fmt.Sprintf("%T %v", err, err)
}

// ceMsg renders an error for logs: CE(msg) for a cancellation.
func ceMsg(err error) string {
	var ce *CancelledError
	if errors.As(err, &ce) {
		return fmt.Sprintf("CE(%q)", ce.Msg)
	}
	return fmt.Sprint(err)
}

// describeTE summarises a timeout error: matches and cause.
func describeTE(err error) string {
	var te *TimeoutError
	if !errors.As(err, &te) {
		return "not a TimeoutError: " + errMsg(err)
	}
	return "TE is(ErrTimeout)=" + boolStr(errors.Is(err, ErrTimeout)) +
		" is(DeadlineExceeded)=" + boolStr(errors.Is(err, context.DeadlineExceeded)) +
		" cancelled=" + boolStr(IsCancelled(err)) + " cause=" + errMsg(te.Cause)
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// ---- other helpers

// Errors children fail with.
var (
	errBoom = errors.New("boom")
	errKey  = errors.New("key")
	errMy   = errors.New("my")
)

func fut2(l LoopOwner, v string) *Future[string] {
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

func (h *slogCapture) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *slogCapture) WithGroup(string) slog.Handler { return h }

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
