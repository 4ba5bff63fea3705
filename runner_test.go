package asyncio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestRUN1_RunReturnsMainResult(t *testing.T) {
	var r eventLog
	v, err := Run(func(t *T) (string, error) {
		r.log("main runs on virtual time: %v", t.Loop().virtual)
		if err := Sleep(t, time.Minute); err != nil {
			return "", err
		}
		r.log("slept until %v", t.Loop().Time())
		return "result", nil
	}, WithVirtualTime())
	r.log("Run: %q %v", v, err)
	checkEvents(t, []string{"main runs on virtual time: true", "slept until 1m0s", `Run: "result" <nil>`}, &r)
}

func TestRUN1_RunnerRunInsideItsRunningLoop(t *testing.T) {
	var r eventLog
	rn := NewRunner(WithVirtualTime())
	defer rn.Close()
	_, err := RunWith(rn, func(t *T) (int, error) {
		_, err := RunWith(rn, func(*T) (int, error) { r.log("nested main ran"); return 0, nil })
		r.log("nested: runtime=%v %v", errors.Is(err, ErrRuntime), err)
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"nested: runtime=true Runner.run() cannot be called from a running event loop"}, &r)
}

func TestRUN2_RunnerSharesOneLazyLoop(t *testing.T) {
	var r eventLog
	rn := NewRunner(WithVirtualTime(), WithDebug())
	r.log("loop before first use: %v", rn.loop != nil)
	var bg *Task[int]
	var first *Loop
	RunWith(rn, func(t *T) (int, error) {
		first = t.Loop()
		bg = CreateTask(t, func(t *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(t, time.Second)
			r.log("background finished in a later run at %v", t.Loop().Time())
			return 0, nil
		}, WithName("bg"))
		return 0, nil
	})
	v, err := RunWith(rn, func(t *T) (int, error) {
		r.log("same loop: %v debug: %v", t.Loop() == first, t.Loop().Debug())
		_, err := bg.Await(t)
		return 2, err
	}, WithName("second"))
	r.log("second run: %d %v", v, err)
	r.log("close: %v", rn.Close())
	r.log("close again: %v", rn.Close())
	_, err = RunWith(rn, func(*T) (int, error) { r.log("ran after close"); return 0, nil })
	r.log("after close: %v loop closed: %v", err, first.IsClosed())
	checkEvents(t, []string{
		"loop before first use: false",
		"same loop: true debug: true",
		"background finished in a later run at 1s",
		"second run: 2 <nil>",
		"close: <nil>",
		"close again: <nil>",
		"after close: Runner is closed loop closed: true",
	}, &r)
}

func TestRUN3_CloseCancelsDrainsAndReports(t *testing.T) {
	var r eventLog
	rn := NewRunner(WithVirtualTime())
	ctxs := handlerLog(rn.Loop(), &r)
	RunWith(rn, func(t *T) (int, error) {
		//asynciovet:ignore unawaitedtask the Runner cancels tasks left running at exit: that is the behaviour under test
		CreateTask(t, func(t *T) (int, error) {
			err := Sleep(t, time.Hour)
			r.log("polite sees %s", describe(err))
			// Cleanup may still await while being cancelled.
			err = Sleep(t, time.Second)
			r.log("polite cleanup slept: %v at %v", err, t.Loop().Time())
			return 0, &CancelledError{Msg: "polite"}
		}, WithName("polite"))
		//asynciovet:ignore unawaitedtask the Runner cancels tasks left running at exit: that is the behaviour under test
		CreateTask(t, func(t *T) (int, error) {
			err := Sleep(t, time.Hour)
			r.log("rude sees %s", describe(err))
			return 0, fmt.Errorf("cleanup failed")
		}, WithName("rude"))
		return 0, nil
	})
	r.log("close: %v", rn.Close())
	slices.Sort(r.events[:2]) // tasks are cancelled in an unspecified order
	checkEvents(t, []string{
		`polite sees CancelledError("")`,
		`rude sees CancelledError("")`,
		"polite cleanup slept: <nil> at 1s",
		"handler: unhandled exception during asyncio.run() shutdown",
		"close: <nil>",
	}, &r)
	if len(*ctxs) == 1 && ((*ctxs)[0].Task.Name() != "rude" || (*ctxs)[0].Err.Error() != "cleanup failed") {
		t.Errorf("context = %+v, want task rude and its error", (*ctxs)[0])
	}
	if !rn.loop.IsClosed() {
		t.Error("the loop must be closed")
	}
}

// RUN-2: a closed runner has no loop to hand out: Loop panics with the
// *RuntimeError "Runner is closed" (get_loop raises it), RunWith returns it.
func TestRUN2_ClosedRunnerRefusesLoopAndRun(t *testing.T) {
	rn := NewRunner(WithVirtualTime())
	rn.Loop()
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := RunWith(rn, func(*T) (int, error) { return 1, nil })
	if !errors.Is(err, ErrRuntime) || err.Error() != "Runner is closed" {
		t.Errorf("RunWith after Close: %v", err)
	}
	defer func() {
		err, _ := recover().(error)
		if !errors.Is(err, ErrRuntime) || err.Error() != "Runner is closed" {
			t.Errorf("Loop after Close panicked with %v, want the RuntimeError Runner is closed", err)
		}
	}()
	rn.Loop()
	t.Error("Loop after Close did not panic")
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

func TestRUN5_MainErrorPropagates(t *testing.T) {
	boom := errors.New("main failed")
	v, err := Run(func(t *T) (int, error) { return 3, boom }, WithVirtualTime())
	if !errors.Is(err, boom) || v != 0 {
		t.Errorf("Run = %d, %v; want 0, %v", v, err, boom)
	}
	_, err = Run(func(t *T) (int, error) {
		t.Cancel("from main")
		return 0, Sleep(t, 0)
	}, WithVirtualTime())
	if describe(err) != `CancelledError("from main")` {
		t.Errorf("cancelled main: %v, want the message kept", err)
	}
	_, err = Run(func(t *T) (int, error) { panic("in main") }, WithVirtualTime())
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "in main" {
		t.Errorf("panicking main: %v", err)
	}
}

func TestRUN3_StubbornTaskAtCloseOnVirtualTime(t *testing.T) {
	var r eventLog
	rn := NewRunner(WithVirtualTime())
	handlerLog(rn.Loop(), &r)
	RunWith(rn, func(t *T) (int, error) {
		//asynciovet:ignore unawaitedtask the Runner cancels tasks left running at exit: that is the behaviour under test
		CreateTask(t, func(t *T) (int, error) {
			defer r.log("stubborn unwound")
			err := Sleep(t, time.Hour)
			r.log("stubborn ignores %s", describe(err))
			return NewFuture[int](t).Await(t) // never done: shutdown deadlocks
		}, WithName("stubborn"))
		return 0, nil
	})
	r.log("close: %v", rn.Close())
	checkEvents(t, []string{`stubborn ignores CancelledError("")`, "handler: Task was destroyed but it is pending!",
		"stubborn unwound", "close: <nil>"}, &r)
}

// RunContext: when ctx is done while main waits, main is cancelled with the
// cause as the message, and the error returned matches both a cancellation
// and the cause. The cancel comes from another goroutine (as a signal
// would) and wakes the real-clock loop.
func TestRunContextCancelsMain(t *testing.T) {
	var r eventLog
	ctx, cancel := context.WithCancelCause(context.Background())
	_, err := RunContext(ctx, func(tk *T) (int, error) {
		r.log("main's context is ctx's child: %v", tk.Context().Value(ctxKey("k")) == nil)
		go cancel(errStop)
		_, err := NewFuture[int](tk).Await(tk)
		r.log("main: %s", describe(err))
		return 0, err
	})
	var ce *CancelledError
	r.log("Run: %v cancelled=%v is(cause)=%v msg=%q", err, IsCancelled(err), errors.Is(err, errStop),
		func() string { errors.As(err, &ce); return ce.Msg }())
	checkEvents(t, []string{
		"main's context is ctx's child: true",
		`main: CancelledError("stop")`,
		`Run: asyncio: cancelled: stop cancelled=true is(cause)=true msg="stop"`,
	}, &r)
}

// RunContext with a context done already: main never runs, and the error
// matches context.DeadlineExceeded; a nil context panics with a
// *ValueError. A context that stays live changes nothing.
func TestRunContextDoneBeforeStart(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	ran := false
	_, err := RunContext(ctx, func(*T) (int, error) { ran = true; return 1, nil }, WithVirtualTime())
	if ran || !IsCancelled(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ran=%v err=%v", ran, err)
	}
	v, err := RunContext(context.Background(), func(tk *T) (int, error) { return 2, Sleep(tk, time.Second) }, WithVirtualTime())
	if v != 2 || err != nil {
		t.Errorf("live context: %d %v", v, err)
	}
	//lint:ignore SA1012 the test checks that a nil ctx panics with a *ValueError
	p := mustPanic(t, "RunContext(nil)", func() { RunContext(nil, func(*T) (int, error) { return 0, nil }) })
	if !errors.Is(p.(error), ErrValue) {
		t.Errorf("nil context: %v", p)
	}
}

// RunWith(r, main, WithContext(ctx)) is Runner.run(coro, context=ctx): one
// context per run on the same loop; a main that swallows the cancellation
// and returns a value is not turned into an error.
func TestRunWithContextOnRunner(t *testing.T) {
	rn := NewRunner()
	defer rn.Close()
	v, err := RunWith(rn, func(tk *T) (any, error) {
		return tk.Context().Value(ctxKey("k")), nil
	}, WithContext(context.WithValue(context.Background(), ctxKey("k"), "first")))
	if v != "first" || err != nil {
		t.Errorf("first run: %v %v", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	v, err = RunWith(rn, func(tk *T) (any, error) {
		go cancel()
		_, err := NewFuture[int](tk).Await(tk)
		return "swallowed " + describe(err), nil
	}, WithContext(ctx))
	if v != `swallowed CancelledError("context canceled")` || err != nil {
		t.Errorf("second run: %v %v", v, err)
	}
}

// RUN-1: asyncio.Run from a task of a running loop returns the
// RuntimeError asyncio.run raises, without running main; from a goroutine
// that holds no loop (Go, an executor job) it runs.
func TestRUN1_RunInsideARunningLoop(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		_, err := Run(func(*T) (int, error) { t.Error("nested main ran"); return 0, nil })
		if !errors.Is(err, ErrRuntime) || err.Error() != "asyncio.run() cannot be called from a running event loop" {
			t.Errorf("nested Run: %v", err)
		}
		v, err := Go(tk, func(context.Context) (int, error) {
			return Run(func(*T) (int, error) { return 7, nil })
		})
		if v != 7 || err != nil {
			t.Errorf("Run on another goroutine: %d %v", v, err)
		}
		return nil
	})
}

// A run whose main task ended its goroutine (runtime.Goexit, t.FailNow)
// leaves no stop behind for the next run of the same Runner, which
// completes normally (it failed with "Event loop stopped before Future
// completed.").
func TestRunWith_NextRunAfterAGoexitedMain(t *testing.T) {
	r := NewRunner()
	defer r.Close()
	r.Loop().SetExceptionHandler(func(*Loop, ExceptionContext) {})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = RunWith(r, func(tk *T) (int, error) {
			runtime.Goexit()
			return 0, nil
		})
	}()
	<-done
	v, err := RunWith(r, func(tk *T) (int, error) { return 1, Sleep(tk, 0) })
	if v != 1 || err != nil {
		t.Errorf("the run after the Goexit: %d, %v", v, err)
	}
}
