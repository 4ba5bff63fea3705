package asyncio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

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

// The untyped task handle *T answers Exception, Err and
// RemoveDoneCallback like the task itself (FUT-3, FUT-6): pending ->
// InvalidStateError, failed -> the error, cancelled -> a CancelledError
// (FUT-8); a removed done callback never runs and removing it
// again removes nothing.
func TestFUT3_FUT6_UntypedTaskHandle(t *testing.T) {
	var log []string
	runVirtual(t, func(at *T) error {
		boom := errors.New("boom")
		failing := CreateTask(at, func(t *T) (int, error) {
			Sleep(t, time.Second)
			return 0, boom
		})
		var aw Awaitable = failing.T()
		log = append(log, "pending Exception: "+describe(aw.Err()), "pending Err: "+describe(aw.Err()))
		first := aw.AddDoneCallback(func() { log = append(log, "first callback") })
		aw.AddDoneCallback(func() { log = append(log, "second callback") })
		log = append(log, fmt.Sprintf("removed %d then %d", aw.RemoveDoneCallback(first), aw.RemoveDoneCallback(first)))
		if err := at.Await(aw); err != boom {
			return fmt.Errorf("await: %v", err)
		}
		Sleep(at, 0) // the done callbacks run before this task resumes again
		log = append(log, "Exception: "+describe(aw.Err()), "Err: "+describe(aw.Err()))

		cancelled := CreateTask(at, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
		Sleep(at, 0)
		cancelled.T().Cancel("stop")
		log = append(log, "cancelled Await: "+describe(at.Await(cancelled.T())))
		log = append(log, "cancelled Exception: "+describe(cancelled.T().Err()), "cancelled Err: "+describe(cancelled.T().Err()))
		return nil
	})
	want := []string{
		`pending Exception: *asyncio.InvalidStateError "Exception is not set."`,
		`pending Err: *asyncio.InvalidStateError "Exception is not set."`,
		"removed 1 then 0",
		"second callback",
		"Exception: *errors.errorString boom",
		"Err: *errors.errorString boom",
		// FUT-8: the first retrieval gets the original CE with its
		// message, later ones a fresh CE without (a task stores none).
		`cancelled Await: *asyncio.CancelledError "stop"`,
		`cancelled Exception: *asyncio.CancelledError ""`,
		`cancelled Err: *asyncio.CancelledError ""`,
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// Future's repr in each state (asyncio's `<Future pending>`,
// `<Future finished result=…>`, `<Future finished exception=…>`,
// `<Future cancelled>`).
func TestFUT_StringByState(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	pending := NewFuture[int](l)
	ok := NewFuture[int](l)
	ok.SetResult(42)
	failed := NewFuture[int](l)
	failed.SetException(errors.New("bad"))
	failed.Err() // retrieved: no "never retrieved" report
	cancelled := NewFuture[int](l)
	cancelled.Cancel()
	got := []string{pending.String(), ok.String(), failed.String(), cancelled.String()}
	want := []string{"<Future pending>", "<Future finished result=42>", "<Future finished exception=bad>", "<Future cancelled>"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

// RunUntilComplete refuses a loop that is already running (LOOP-10) and
// a closed loop (LOOP-11), without touching the awaitable.
func TestLOOP10_LOOP11_RunUntilCompleteRefusals(t *testing.T) {
	l := NewTestLoop()
	var nested error
	f := NewFuture[int](l)
	l.CallSoon(func() {
		nested = l.RunUntilComplete(f)
		f.SetResult(1)
	})
	if err := l.RunUntilComplete(f); err != nil {
		t.Fatal(err)
	}
	var re *RuntimeError
	if !errors.As(nested, &re) || re.Msg != "This event loop is already running" {
		t.Fatalf("nested RunUntilComplete: %v", nested)
	}
	l.Close()
	g := NewFuture[int](NewTestLoop())
	defer g.Loop().Close()
	if err := l.RunUntilComplete(g); !errors.Is(err, ErrLoopClosed) || g.Done() {
		t.Fatalf("RunUntilComplete on a closed loop: %v, done=%v", err, g.Done())
	}
}

// Runner.Close is idempotent and needs no loop when the runner never ran
// anything (asyncio's Runner.close on an uninitialised runner).
func TestRUN3_CloseUnusedAndTwice(t *testing.T) {
	r := NewRunner(WithVirtualTime())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.loop != nil {
		t.Fatal("closing an unused runner created a loop")
	}
	r = NewRunner(WithVirtualTime())
	if _, err := RunWith(r, func(t *T) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil || !r.loop.IsClosed() {
		t.Fatalf("close: %v closed=%v", err, r.loop.IsClosed())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
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
