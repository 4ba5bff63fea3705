package asyncio

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
)

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

var durationRE = regexp.MustCompile(`took \d+\.\d{3} seconds`)

func TestDEBUG1_OffByDefault(t *testing.T) {
	var r eventLog
	l := NewTestLoop()
	r.log("default: %v", l.Debug())
	l.SetDebug(true)
	r.log("SetDebug(true): %v", l.Debug())
	mustClose(t, l)
	l = NewLoop(WithDebug(), WithVirtualTime())
	r.log("WithDebug(): %v", l.Debug())
	mustClose(t, l)
	Run(func(t *T) (int, error) { r.log("Run(WithDebug()): %v", t.Loop().Debug()); return 0, nil }, WithDebug(), WithVirtualTime())
	checkEvents(t, []string{"default: false", "SetDebug(true): true", "WithDebug(): true", "Run(WithDebug()): true"}, &r)
}

func TestDEBUG1_SetDebugWhileRunning(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	handlerLog(l, &r)
	l.CallSoon(func() {
		l.SetDebug(true)
		l.CallSoon(r.logFn("scheduled after SetDebug(true) on the loop's goroutine"))
	})
	runOne(t, l)
	runOne(t, l)
	checkEvents(t, []string{"scheduled after SetDebug(true) on the loop's goroutine"}, &r)
}

func TestDEBUG2_SlowCallbackWarning(t *testing.T) {
	logs := captureSlog(t)
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	l.SetSlowCallbackDuration(0) // every callback and step is "slow"
	l.CallSoon(slowCallback)
	tk := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }, WithName("slow"))
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range logs.take() {
		got = append(got, durationRE.ReplaceAllString(line, "took N.NNN seconds"))
	}
	checkEvents(t, []string{
		"WARN Executing github.com/go-asyncio/asyncio.slowCallback took N.NNN seconds",
		"WARN Executing <Task pending name='slow'> took N.NNN seconds stack=...",
		"WARN Executing <Task finished name='slow'> took N.NNN seconds stack=...",
		// RunUntilComplete's own done callback (it stops the loop).
		"WARN Executing github.com/go-asyncio/asyncio.(*Loop).Stop-fm took N.NNN seconds",
	}, &eventLog{got})

	// Above the threshold only; and nothing at all outside debug mode.
	l.SetSlowCallbackDuration(time.Hour)
	l.CallSoon(slowCallback)
	runOne(t, l)
	l.SetDebug(false)
	l.SetSlowCallbackDuration(0)
	l.CallSoon(slowCallback)
	runOne(t, l)
	if lines := logs.take(); len(lines) != 0 {
		t.Errorf("unexpected warnings: %q", lines)
	}
}

func slowCallback() {}

func TestDEBUG3_ForeignGoroutineCallSoonPanics(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	var r eventLog
	foreign := func(name string, call func()) string {
		out := make(chan string)
		go func() {
			defer func() { out <- fmt.Sprint(recover()) }()
			call()
		}()
		return name + ": " + <-out
	}
	tk := CreateTask(l, func(t *T) (int, error) {
		// The loop runs on this task's goroutine now: its own calls pass.
		l.CallSoon(func() {})
		if err := Sleep(t, time.Second); err != nil {
			return 0, err
		}
		r.log("%s", foreign("CallSoon", func() { l.CallSoon(func() {}) }))
		r.log("%s", foreign("CallLater", func() { l.CallLater(time.Second, func() {}) }))
		r.log("%s", foreign("CallAt", func() { l.CallAt(time.Second, func() {}) }))
		r.log("%s", foreign("CallSoonThreadsafe", func() {
			if _, err := l.CallSoonThreadsafe(r.logFn("threadsafe ran")); err != nil {
				panic(err)
			}
		}))
		return 0, Sleep(t, 0)
	})
	l.CallSoon(func() {
		r.log("%s", foreign("from a callback", func() { l.CallSoon(func() {}) }))
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	const msg = "asyncio: Non-thread-safe operation invoked on an event loop other than the current one"
	checkEvents(t, []string{
		"from a callback: " + msg,
		"CallSoon: " + msg,
		"CallLater: " + msg,
		"CallAt: " + msg,
		"CallSoonThreadsafe: <nil>",
		"threadsafe ran",
	}, &r)
}

func TestDEBUG5_TaskRepr(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	body := func(t *T) (int, error) { return 0, Sleep(t, time.Second) }
	a := CreateTask(l, body, WithName("a"))
	b := CreateTask(l, body, WithName("b"))
	r.log("%v", a)
	runOne(t, l)
	b.Cancel()
	r.log("%v %v", a, b)
	l.RunUntilComplete(a)
	l.RunUntilComplete(b)
	r.log("%v %v", a, b.T())
	checkEvents(t, []string{"<Task pending name='a'>", "<Task pending name='a'> <Task cancelling name='b'>",
		"<Task finished name='a'> <Task cancelled name='b'>"}, &r)
}

func TestEXC1_HandlerAndDefaultHandler(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	l.CallExceptionHandler(ExceptionContext{Err: errors.New("e1")})
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		slog.Info("custom: " + c.Message) // one stream keeps the order
		panic("handler broke")
	})
	l.CallExceptionHandler(ExceptionContext{Message: "original", Err: errors.New("e2")})
	l.SetExceptionHandler(nil)
	l.CallExceptionHandler(ExceptionContext{Message: "back to default"})
	r.events = append(r.events, logs.take()...)
	checkEvents(t, []string{
		"ERROR Unhandled exception in event loop exception=e1",
		"INFO custom: original",
		"ERROR Unhandled error in exception handler exception=asyncio: panic: handler broke stack=...",
		"ERROR original exception=e2",
		"ERROR back to default",
	}, &r)
}

func TestEXC2_StandardContexts(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) }, WithName("pending"))
	runOne(t, l)
	l.CallSoon(func() { panic("cb") })
	runOne(t, l)
	mustClose(t, l)
	for _, line := range logs.take() {
		line, _, _ = strings.Cut(line, " handle=")
		r.log("%s", line)
	}
	checkEvents(t, []string{
		"ERROR Exception in callback github.com/go-asyncio/asyncio.TestEXC2_StandardContexts.func2 exception=asyncio: panic: cb stack=...",
		"ERROR Task was destroyed but it is pending! task=<Task pending name='pending'>",
	}, &r)
	_ = tk
}

func TestEXC3_RetrievalClearsNeverRetrieved(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	fail := func(name string) *Task[int] {
		return CreateTask(l, func(*T) (int, error) { return 0, errors.New(name) }, WithName(name))
	}
	awaited, cancelled, unread := fail("awaited"), fail("cancelled"), fail("unread")
	awaiter := CreateTask(l, func(t *T) (int, error) { awaited.Await(t); return 0, nil })
	l.RunUntilComplete(awaiter)
	r.log("awaited watched=%v", awaited.f.unretrieved != nil)
	r.log("cancel done task: %v watched=%v", cancelled.Cancel(), cancelled.f.unretrieved != nil)
	r.log("unread watched=%v", unread.f.unretrieved != nil)
	unread.Err()
	runtime.KeepAlive(unread)
	checkEvents(t, []string{"awaited watched=false", "cancel done task: false watched=false", "unread watched=true"}, &r)
}
