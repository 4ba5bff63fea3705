package asyncio

// Edge cases of cross-loop queues, cross-loop calls, the default executor
// and the bridges to Go code, found by a hostile run (crossqueue.go,
// crossloop.go, group.go, executor.go, bridge.go, chan.go). Nothing waits
// on the real clock: the loops run on virtual time or wait for explicit
// signals; a real-time timeout only guards against a hang.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// loop.shutdown_default_executor() waits for the jobs already submitted
// (base_events.py: a thread joins the pool, and the loop awaits a future
// that thread completes). A job that waits for its own loop in
// ConcurrentFuture.Wait (RunCoroutineThreadsafe) does not hold a virtual
// clock (RunInExecutor's contract), so its coroutine's Sleep ends and the
// job, then the shutdown, finish. The shutdown's wait counted as outside
// work of its own, so the clock never moved and the loop waited for ever.
func TestCrossLoopBridgeEdge_ShutdownDefaultExecutorWhileAJobWaitsForItsLoop(t *testing.T) {
	l := NewTestLoop()
	main := CreateTask(l, func(tk *T) (int, error) {
		job := RunInExecutor(l, func(ctx context.Context) (int, error) {
			cf := RunCoroutineThreadsafe(l, func(rt *T) (int, error) { return 7, Sleep(rt, time.Hour) })
			if err := cf.Wait(ctx); err != nil {
				return 0, err
			}
			return cf.Result()
		})
		if err := ShutdownDefaultExecutor(tk); err != nil {
			return 0, err
		}
		if !job.Done() {
			return 0, errors.New("ShutdownDefaultExecutor returned before the job's outcome was back")
		}
		if _, err := ToThread(tk, func(context.Context) (int, error) { return 0, nil }); err == nil ||
			!strings.Contains(err.Error(), "Executor shutdown has been called") {
			return 0, errors.New("ToThread after the shutdown: " + describe(err))
		}
		return job.Result()
	})
	done := make(chan error, 1)
	go func() { done <- l.RunUntilComplete(main) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second): // a guard: the loop hangs without the fix
		_, _ = l.CallSoonThreadsafe(func() { main.Cancel("hung") })
		<-done
		t.Errorf("ShutdownDefaultExecutor hung at virtual time %v: its wait held the clock that the job waited for", l.Time())
	}
	if v, err := main.Result(); v != 7 || err != nil || l.Time() != time.Hour {
		t.Errorf("main = %d, %v at %v; want 7, nil at 1h", v, err, l.Time())
	}
	if n := l.external.Load(); n != 0 {
		t.Errorf("outside work left after the shutdown: %d", n)
	}
	mustClose(t, l)
}

// ShutdownDefaultExecutor with a task that is not the running one (here
// from a callback) is a mistake: it must say so, naming itself, and change
// nothing (asyncio's shutdown_default_executor() is a coroutine: called
// and not awaited by a running task, it does nothing). It shut the
// executor down, counted outside work for ever and started a goroutine,
// then panicked in Future.Await.
func TestCrossLoopBridgeEdge_ShutdownDefaultExecutorMisuseChangesNothing(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		if _, err := ToThread(tk, func(context.Context) (int, error) { return 1, nil }); err != nil {
			return err // the executor is in use
		}
		other := startTask(tk, "other", func(ot *T) error { return Sleep(ot, time.Second) })
		before := l.external.Load()
		var got any
		l.CallSoon(func() {
			//asynciovet:ignore droppedcancel the call panics before it could return anything
			got = mustPanic(t, "ShutdownDefaultExecutor from a callback", func() { _ = ShutdownDefaultExecutor(&other.t) })
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		var re *RuntimeError
		if err, _ := got.(error); !errors.As(err, &re) || !strings.Contains(re.Msg, "ShutdownDefaultExecutor") {
			t.Errorf("panic %v (%T); want a *RuntimeError naming ShutdownDefaultExecutor", got, got)
		}
		if n := l.external.Load(); n != before {
			t.Errorf("outside work %d after the refused call, want %d", n, before)
		}
		if v, err := ToThread(tk, func(context.Context) (int, error) { return 2, nil }); v != 2 || err != nil {
			t.Errorf("ToThread after the refused shutdown: %d, %s; want 2 (nothing was shut down)", v, describe(err))
		}
		other.Cancel()
		awaitAll(tk, other)
		return nil
	})
}

// A CrossQueue not made by NewCrossQueue (nil, or the zero value) has no
// capacity: PutNowait reported a full queue and Put waited for ever. Each
// operation panics with a *ValueError that names the mistake, as
// NewCrossQueue(0) does.
func TestCrossLoopBridgeEdge_ZeroCrossQueueNamesTheMistake(t *testing.T) {
	check := func(what string, f func()) {
		t.Helper()
		got := mustPanic(t, what, f)
		var ve *ValueError
		if err, _ := got.(error); !errors.As(err, &ve) || !strings.Contains(ve.Msg, "NewCrossQueue") {
			t.Errorf("%s: panic %v (%T); want a *ValueError naming NewCrossQueue", what, got, got)
		}
	}
	var zero CrossQueue[int]
	var nilq *CrossQueue[int]
	check("PutNowait on the zero queue", func() { _ = zero.PutNowait(1) })
	check("GetNowait on the zero queue", func() { _, _ = zero.GetNowait() })
	check("PutNowait on a nil queue", func() { _ = nilq.PutNowait(1) })
	runVirtual(t, func(tk *T) error {
		//asynciovet:ignore droppedcancel each call panics before it could return anything
		check("Put on the zero queue", func() { _ = zero.Put(tk, 1) })
		//asynciovet:ignore droppedcancel each call panics before it could return anything
		check("Get on the zero queue", func() { _, _ = zero.Get(tk) })
		//asynciovet:ignore droppedcancel each call panics before it could return anything
		check("Get on a nil queue", func() { _, _ = nilq.Get(tk) })
		return nil
	})
	if zero.Len() != 0 || zero.Cap() != 0 {
		t.Errorf("the zero queue changed: Len %d, Cap %d", zero.Len(), zero.Cap())
	}
}
