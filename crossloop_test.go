package asyncio

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cross-loop calls (crossloop.go). Each test runs a group of real-time
// loops; nothing waits on the real clock: every wait is for an explicit
// signal (a future completed by the other side).

// twoLoops runs main on loop 0 of a new 2-loop group (RunGroup), loop 1
// serving, and closes the group.
func twoLoops(t *testing.T, main func(tk *T, b *Loop) error, opts ...GroupOption) error {
	t.Helper()
	g := NewLoopGroup(append([]GroupOption{WithLoops(2)}, opts...)...)
	defer func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	_, err := RunGroup(g, func(tk *T) (struct{}, error) { return struct{}{}, main(tk, g.Loop(1)) })
	return err
}

func TestCrossLoop_CallOnRunsFnAsATaskOnTheTargetAndReturnsItsResult(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		a := tk.Loop()
		var onB bool
		v, err := CallOn(tk, b, func(rt *T) (int, error) {
			onB = rt.Loop() == b && CurrentTask(b) == rt && b.OnLoopGoroutine() && !a.OnLoopGoroutine()
			if err := Sleep(rt, 0); err != nil { // a remote task may suspend
				return 0, err
			}
			return 41 + 1, nil
		})
		if err != nil || v != 42 || !onB {
			t.Errorf("CallOn = %d, %v; ran as a task on the target: %v", v, err, onB)
		}
		// The cheap form: a callback on the target.
		w, err := CallFuncOn(tk, b, func() (string, error) {
			if !b.OnLoopGoroutine() || CurrentTask(b) != nil {
				return "", errors.New("not a callback on the target")
			}
			return "cb", nil
		})
		if err != nil || w != "cb" {
			t.Errorf("CallFuncOn = %q, %v", w, err)
		}
		if n := a.external.Load(); n != 0 {
			t.Errorf("calling loop's outside work after the calls = %d, want 0", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var errRemote = errors.New("remote failure")

func TestCrossLoop_RemoteErrorAndPanicComeBackAndTheTargetKeepsWorking(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		_, err := CallOn(tk, b, func(*T) (int, error) { return 0, errRemote })
		if !errors.Is(err, errRemote) {
			t.Errorf("remote error: got %v, want errRemote", err)
		}
		_, err = CallOn(tk, b, func(*T) (int, error) { panic("boom on B") })
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "boom on B" || !strings.Contains(string(pe.Stack), "TestCrossLoop_RemoteErrorAndPanic") {
			t.Errorf("remote panic: got %v (stack %s)", err, func() string {
				if pe != nil {
					return string(pe.Stack)
				}
				return ""
			}())
		}
		_, err = CallFuncOn(tk, b, func() (int, error) { panic(errRemote) })
		if !errors.As(err, &pe) || !errors.Is(err, errRemote) {
			t.Errorf("remote callback panic: got %v", err)
		}
		v, err := CallFuncOn(tk, b, func() (int, error) { return 7, nil })
		if v != 7 || err != nil {
			t.Errorf("after the panics: %d, %v", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// started returns a future on tk's loop and a function, for the remote
// side, that completes it from the target loop.
func started(tk *T) (*Future[struct{}], func()) {
	a := tk.Loop()
	f := NewFuture[struct{}](tk)
	return f, func() { _, _ = a.CallSoonThreadsafe(func() { _ = f.SetResult(struct{}{}) }) }
}

func TestCrossLoop_CancellingTheCallerCancelsTheRemoteTaskWithItsMessage(t *testing.T) {
	remoteErr := make(chan error, 1)
	err := twoLoops(t, func(tk *T, b *Loop) error {
		up, signal := started(tk)
		caller := CreateTask(tk, func(ct *T) (int, error) {
			return CallOn(ct, b, func(rt *T) (int, error) {
				signal()
				_, err := NewFuture[int](rt).Await(rt) // never done
				remoteErr <- err
				return 0, err
			})
		})
		if _, err := up.Await(tk); err != nil {
			return err
		}
		caller.Cancel("stop now")
		_, err := caller.Await(tk)
		var ce *CancelledError
		if !errors.As(err, &ce) || ce.Msg != "stop now" {
			t.Errorf("caller: got %s, want CancelledError(\"stop now\")", describe(err))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The group's Close ran both loops to the end: the remote task saw it.
	if err := <-remoteErr; describe(err) != `CancelledError("stop now")` {
		t.Errorf("remote task: got %s", describe(err))
	}
}

func TestCrossLoop_RemoteCancellationComesBackAsACancellation(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		fut, err := SubmitTo(tk, b, func(rt *T) (int, error) {
			return 0, &CancelledError{Msg: "remote gave up"}
		})
		if err != nil {
			return err
		}
		_, err = fut.Await(tk)
		if !fut.Cancelled() || describe(err) != `CancelledError("remote gave up")` {
			t.Errorf("got %s (cancelled %v)", describe(err), fut.Cancelled())
		}
		if tk.Cancelling() != 0 {
			t.Errorf("the awaiting task itself was cancelled")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrossLoop_BadCallsFailBeforeAnyStateChanges(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	closed := NewLoop()
	mustClose(t, closed)
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		a, b := tk.Loop(), g.Loop(1)
		fn := func(*T) (int, error) { return 1, nil }
		check := func(what string, err error, want error, text string) {
			t.Helper()
			if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
				t.Errorf("%s: got %v, want %v containing %q", what, err, want, text)
			}
		}
		_, err := CallOn(tk, a, fn)
		check("own loop", err, ErrRuntime, "own loop")
		_, err = SubmitTo(tk, closed, fn)
		check("closed target", err, ErrLoopClosed, "target loop is closed")
		_, err = CallFuncOn(tk, closed, func() (int, error) { return 0, nil })
		check("closed target (func)", err, ErrLoopClosed, "target loop is closed")
		var ferr, ferr2 error
		fromForeignGoroutine(func() {
			_, ferr = SubmitTo(a, b, fn)
			_, ferr2 = CallOn(tk, b, fn)
		})
		check("plain goroutine", ferr, ErrRuntime, "not running the calling loop")
		check("plain goroutine awaiting", ferr2, ErrRuntime, "not the running task")
		//asynciovet:ignore droppedcancel test scaffolding: the cleanup call's outcome is not what the test checks
		mustPanic(t, "nil target", func() { _, _ = CallOn[int](tk, nil, fn) })
		mustPanic(t, "nil fn", func() { _, _ = SubmitTo[int](tk, b, nil) })
		//asynciovet:ignore blockingcall a test-only mutex held for a few instructions, never across an await
		a.threadsafeMu.Lock()
		tracked := len(a.threadsafeFutures)
		a.threadsafeMu.Unlock()
		if n := a.external.Load(); n != 0 || tracked != 0 {
			t.Errorf("state changed: outside work %d, tracked calls %d", n, tracked)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A target loop that closes while a call is in flight: the caller gets
// ErrLoopClosed, the remote task is unwound, and nothing is left tracked.
func TestCrossLoop_TargetClosingMidCallGivesTheCallerErrLoopClosed(t *testing.T) {
	b := NewLoop()
	var remoteCleanup sync.WaitGroup
	remoteCleanup.Add(1)
	bDone := make(chan error, 1)
	go func() { bDone <- b.RunForever() }()
	var reports []string
	var mu sync.Mutex
	b.SetExceptionHandler(func(_ *Loop, ctx ExceptionContext) {
		//asynciovet:ignore blockingcall a test-only mutex held for a few instructions (the reports are read from the test's goroutine)
		mu.Lock()
		reports = append(reports, ctx.Message)
		mu.Unlock()
	})
	_, err := Run(func(tk *T) (struct{}, error) {
		up, signal := started(tk)
		fut, err := SubmitTo(tk, b, func(rt *T) (int, error) {
			defer remoteCleanup.Done()
			signal()
			return NewFuture[int](rt).Await(rt)
		})
		if err != nil {
			return struct{}{}, err
		}
		if _, err := up.Await(tk); err != nil {
			return struct{}{}, err
		}
		// Stop and close b from another goroutine while tk awaits.
		go func() {
			_, _ = b.CallSoonThreadsafe(b.Stop)
			<-bDone
			_ = b.Close()
		}()
		_, err = fut.Await(tk)
		if !errors.Is(err, ErrLoopClosed) || !strings.Contains(err.Error(), "target loop was closed") {
			t.Errorf("got %v, want ErrLoopClosed naming the target", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	remoteCleanup.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || reports[0] != "Task was destroyed but it is pending!" {
		t.Errorf("reports on the target: %q", reports)
	}
}

// A calling loop that closes while its call is in flight: the remote task
// is cancelled.
func TestCrossLoop_CallerClosingMidCallCancelsTheRemoteTask(t *testing.T) {
	b := NewLoop()
	bDone := make(chan error, 1)
	go func() { bDone <- b.RunForever() }()
	remoteErr := make(chan error, 1)
	_, err := Run(func(tk *T) (struct{}, error) {
		up, signal := started(tk)
		_, err := SubmitTo(tk, b, func(rt *T) (int, error) {
			signal()
			_, err := NewFuture[int](rt).Await(rt)
			remoteErr <- err
			return 0, err
		})
		if err != nil {
			return struct{}{}, err
		}
		_, err = up.Await(tk)
		return struct{}{}, err // returns without awaiting: Run closes the loop
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-remoteErr; describe(err) != `CancelledError("the calling loop was closed")` {
		t.Errorf("remote task: got %s", describe(err))
	}
	_, _ = b.CallSoonThreadsafe(b.Stop)
	<-bDone
	mustClose(t, b)
}

// On virtual time a call in flight is outside work: the caller's loop
// waits for it instead of reporting a deadlock or moving its clock.
func TestCrossLoop_VirtualTimeCallerWaitsForTheCall(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		v, err := CallOn(tk, b, func(rt *T) (int, error) {
			if err := Sleep(rt, 3600e9); err != nil { // an hour of b's clock
				return 0, err
			}
			return int(rt.Loop().Time() / 1e9), nil
		})
		if err != nil || v != 3600 {
			t.Errorf("got %d, %v", v, err)
		}
		if now := tk.Loop().Time(); now != 0 {
			t.Errorf("the caller's clock moved to %v", now)
		}
		return nil
	}, WithGroupLoopOptions(WithVirtualTime()))
	if err != nil {
		t.Fatal(err)
	}
}

// A snapshot of the calling loop shows a task awaiting a cross-loop call
// as awaiting the remote task, by name, id and loop.
func TestCrossLoop_SnapshotShowsTheRemoteTask(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		up, signal := started(tk)
		var remoteID string
		caller := CreateTask(tk, func(ct *T) (int, error) {
			return CallOn(ct, b, func(rt *T) (int, error) {
				remoteID = taskID(rt)
				signal()
				return NewFuture[int](rt).Await(rt)
			})
		}, WithName("caller"))
		if _, err := up.Await(tk); err != nil {
			return err
		}
		s := Snapshot(tk, SnapshotOptions{})
		var got TaskInfo
		for _, ti := range s.Tasks {
			if ti.Name == "caller" {
				got = ti
			}
		}
		if !strings.HasPrefix(got.Awaits, "cross-loop call: task 'Task-") || !strings.HasSuffix(got.Awaits, "' on loop 1") || got.AwaitsID != remoteID {
			t.Errorf("caller awaits %q (%s), want the remote task %s on loop 1", got.Awaits, got.AwaitsID, remoteID)
		}
		caller.Cancel()
		//asynciovet:ignore droppedcancel the caller was cancelled by the test itself; its outcome is not what the test checks
		_, _ = caller.Await(tk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A calling loop that closes unregisters itself from the loops it called,
// which would otherwise keep it (and tell it of their own Close) forever.
func TestCrossLoop_ClosedCallerLeavesNoRegistrationOnTheTarget(t *testing.T) {
	b := NewLoop()
	bDone := make(chan error, 1)
	go func() { bDone <- b.RunForever() }()
	_, err := Run(func(tk *T) (int, error) {
		return CallFuncOn(tk, b, func() (int, error) { return 1, nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fromForeignGoroutine(func() {
		done := make(chan struct{})
		_, _ = b.CallSoonThreadsafe(func() {
			//asynciovet:ignore blockingcall the test reads the loop's own lock-guarded list, held for a few instructions
			b.threadsafeMu.Lock()
			n = len(b.threadsafeFutures)
			b.threadsafeMu.Unlock()
			close(done)
		})
		<-done
	})
	if n != 0 {
		t.Errorf("the target still lists %d registrations of a closed caller", n)
	}
	_, _ = b.CallSoonThreadsafe(b.Stop)
	<-bDone
	mustClose(t, b)
}

// A target loop closed by its Runner (or its LoopGroup) while a call is in
// flight cancels its pending tasks first; the remote task cancelled that
// way ends because its loop closed, not because the caller asked, and the
// caller gets an error wrapping ErrLoopClosed, with no cancellation of its
// own pending (it got a bare cancellation).
func TestCallOn_TargetClosedByItsRunnerGivesErrLoopClosed(t *testing.T) {
	rb := NewRunner()
	b := rb.Loop()
	mainDone := NewFuture[struct{}](b)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_, _ = RunWith(rb, func(tk *T) (struct{}, error) { return mainDone.Await(tk) })
		if err := rb.Close(); err != nil {
			t.Errorf("target's Runner.Close: %v", err)
		}
	}()
	_, err := Run(func(tk *T) (int, error) {
		_, err := CallOn(tk, b, func(rt *T) (int, error) {
			_ = mainDone.SetResult(struct{}{}) // b's main returns: its Runner closes b
			return 0, Sleep(rt, time.Hour)
		})
		if !errors.Is(err, ErrLoopClosed) || IsCancelled(err) || tk.Cancelling() != 0 {
			t.Errorf("CallOn whose target closed: %v (cancelling %d)", err, tk.Cancelling())
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-served
}

// A SubmitTo future that failed and was never read is reported when its
// loop closes with the future itself in ExceptionContext.Future, as a
// future failed with SetException is (FUT-10; asyncio's context["future"]).
func TestCrossLoop_UnretrievedFailureReportNamesTheFuture(t *testing.T) {
	var reports []ExceptionContext
	var fut *Future[int]
	err := twoLoops(t, func(tk *T, b *Loop) error {
		tk.Loop().SetExceptionHandler(func(_ *Loop, c ExceptionContext) { reports = append(reports, c) })
		var err error
		fut, err = SubmitTo(tk, b, func(rt *T) (int, error) { return 0, errors.New("remote boom") })
		if err != nil {
			return err
		}
		done := NewFuture[struct{}](tk)
		fut.AddDoneCallback(func() { done.SetResult(struct{}{}) }) // waits without reading fut
		_, err = done.Await(tk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].Message != "Future exception was never retrieved" {
		t.Fatalf("reports: %+v, want one never-retrieved report", reports)
	}
	if f, ok := reports[0].Future.(*Future[int]); !ok || f != fut {
		t.Errorf("report's Future = %v (%T), want the SubmitTo future", reports[0].Future, reports[0].Future)
	}
	runtime.KeepAlive(fut)
}
