package asyncio

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

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

// The default exception handler logs the message ("Unhandled exception in
// event loop" when empty, as asyncio's default_exception_handler) with
// the error and the task, future and handle concerned.
func TestEXC1_DefaultHandlerLogsTaskFutureHandle(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	defer l.Close()
	tk := CreateTask(l, func(t *T) (int, error) { return 0, nil }, WithName("worker"))
	f := NewFuture[int](l)
	h := l.CallSoon(exceptionContextCallback)
	taskRepr := tk.T().String() // still pending
	l.DefaultExceptionHandler(ExceptionContext{Err: errors.New("boom"), Task: tk.T(), Future: f, Handle: h})
	l.DefaultExceptionHandler(ExceptionContext{Message: "custom"})
	h.Cancel()
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ERROR Unhandled exception in event loop exception=boom task=" + taskRepr +
			" future=<Future pending> handle=github.com/go-asyncio/asyncio.exceptionContextCallback",
		"ERROR custom",
	}
	if d := cmp.Diff(want, logs.take()); d != "" {
		t.Fatal(d)
	}
}

func exceptionContextCallback() {}

func TestEXC2_StandardContexts(t *testing.T) {
	logs := captureSlog(t)
	l := NewTestLoop()
	var r eventLog
	//asynciovet:ignore unawaitedtask a failed or pending task nobody awaits is the report under test
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
