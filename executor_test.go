package asyncio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// syncAwaitCtx waits for ctx to be cancelled; the watchdog only turns a
// missing cancellation into a failed log comparison instead of a hang.
func syncAwaitCtx(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
}

// THREAD-1: a job's completion (CallSoonThreadsafe) wakes a real-clock loop
// that is blocked with nothing else to do. The job returns only once the
// loop is asleep in its poll, so the wake-up is what ends the wait.
func TestTHREAD1_CompletionWakesBlockedLoop(t *testing.T) {
	v, err := Run(func(tk *T) (string, error) {
		l := tk.Loop()
		return ToThread(tk, func(context.Context) (string, error) {
			waitUntilSleeping(l) // no timer and no other work: it blocks for good
			return "from worker", nil
		})
	})
	if v != "from worker" || err != nil {
		t.Fatalf("got %q, %v", v, err)
	}
}

// THREAD-2: run_in_executor returns a future chained to the job; a panic
// fails only that call; a virtual-time loop waits for work in flight
// instead of reporting a deadlock, without moving its clock.
func TestTHREAD2_RunInExecutorResultsAndPanic(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		ok := RunInExecutor(l, func(context.Context) (int, error) { return 42, nil })
		bad := RunInExecutor(l, func(context.Context) (int, error) { return 0, errors.New("boom") })
		pan := RunInExecutor(l, func(context.Context) (int, error) { panic("kaboom") })
		r.log("pending right after submit: %v", !ok.Done())
		v, err := ok.Await(tk)
		r.log("ok: %d %s", v, describe(err))
		_, err = bad.Await(tk)
		r.log("bad: %s", describe(err))
		_, err = pan.Await(tk)
		var pe *PanicError
		r.log("panic: %v value=%v", errors.As(err, &pe), pe.Value)
		r.log("virtual time=%v external=%d", l.Time(), l.external.Load())
		return nil
	})
	checkEvents(t, []string{
		"pending right after submit: true",
		"ok: 42 <nil>",
		`bad: *errors.errorString("boom")`,
		"panic: true value=kaboom",
		"virtual time=0s external=0",
	}, &r)
}

// Work on the executor takes no virtual time: the clock must not jump to
// an unrelated timer while a job is in flight. The job returns only once
// the loop is asleep waiting for it, so the loop has had its chance to
// jump.
func TestVirtualTimeWaitsForExecutorWork(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	sleeper := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
	job := CreateTask(l, func(t *T) (time.Duration, error) {
		_, err := ToThread(t, func(ctx context.Context) (int, error) {
			waitUntilSleeping(l)
			return 1, nil
		})
		return t.Loop().Time(), err
	})
	if err := l.RunUntilComplete(job); err != nil {
		t.Fatal(err)
	}
	if at, _ := job.Result(); at != 0 {
		t.Errorf("executor job finished at virtual time %v, want 0 (the clock jumped while it ran)", at)
	}
	sleeper.Cancel()
	l.RunUntilComplete(sleeper)
}

// THREAD-4 on virtual time: an executor job that waits, with its ctx, for
// a coroutine it ran on the same loop (RunCoroutineThreadsafe) is waiting
// for the loop, not working: the clock moves on to the coroutine's timer
// instead of the loop waiting for the job forever. Cancelling the job while
// it waits counts it as work again, so the loop waits for its result
// rather than reporting a deadlock.
func TestTHREAD4_VirtualTimeMovesWhileExecutorJobWaitsOnLoop(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	job := CreateTask(l, func(t *T) (int, error) {
		return ToThread(t, func(ctx context.Context) (int, error) {
			cf := RunCoroutineThreadsafe(l, func(t *T) (int, error) { return 7, Sleep(t, time.Hour) })
			if err := cf.Wait(ctx); err != nil {
				return 0, err
			}
			return cf.Result()
		})
	})
	if err := l.RunUntilComplete(job); err != nil {
		t.Fatal(err)
	}
	if v, _ := job.Result(); v != 7 || l.Time() != time.Hour {
		t.Errorf("job = %d at %v, want 7 at 1h", v, l.Time())
	}
	returned := make(chan error, 1)
	fut := RunInExecutor(l, func(ctx context.Context) (int, error) {
		cf := RunCoroutineThreadsafe(l, func(t *T) (int, error) { return 0, Sleep(t, 24*time.Hour) })
		err := cf.Wait(ctx)
		returned <- err
		return 0, err
	})
	canceller := CreateTask(l, func(t *T) (int, error) {
		if err := Sleep(t, time.Minute); err != nil {
			return 0, err
		}
		fut.Cancel()
		return 0, nil
	})
	if err := l.RunUntilComplete(canceller); err != nil {
		t.Fatal(err)
	}
	if err := <-returned; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiting job got %v, want context.Canceled", err)
	}
	// The job's completion arrives through CallSoonThreadsafe: the loop
	// waits for it (no ErrDeadlock) and then has nothing but the 24h timer.
	for l.Stats().External > 0 {
		runOne(t, l)
	}
	if got := l.Time(); got != time.Hour+time.Minute {
		t.Errorf("clock at %v, want 1h1m0s", got)
	}
}

// THREAD-2: the default executor runs at most min(32, NumCPU+4) jobs at a
// time and queues the rest.
func TestTHREAD2_PoolIsBounded(t *testing.T) {
	if want := min(32, runtime.NumCPU()+4); defaultExecutorWorkers() != want {
		t.Fatalf("defaultExecutorWorkers() = %d, want %d", defaultExecutorWorkers(), want)
	}
	n := defaultExecutorWorkers()
	started, release := make(chan struct{}, n+3), make(chan struct{})
	var workers, queued int
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		var futs []*Future[int]
		for i := range n + 3 {
			futs = append(futs, RunInExecutor(l, func(context.Context) (int, error) {
				started <- struct{}{}
				<-release
				return i, nil
			}))
		}
		// Observe the pool from a job: once n jobs are running, every worker
		// is busy and the other 3 wait in the queue.
		observe := RunInExecutor(l, func(context.Context) (struct{}, error) { return struct{}{}, nil })
		_ = observe
		ex := defaultExecutor(l)
		go func() {
			for range n {
				<-started
			}
			ex.mu.Lock()
			workers, queued = ex.workers, len(ex.queue)
			ex.mu.Unlock()
			close(release)
		}()
		sum := 0
		for _, f := range futs {
			v, err := f.Await(tk)
			if err != nil {
				return err
			}
			sum += v
		}
		_, err := observe.Await(tk)
		if want := (n + 2) * (n + 3) / 2; sum != want {
			return fmt.Errorf("sum %d, want %d", sum, want)
		}
		return err
	})
	if workers != n || queued != 4 {
		t.Errorf("with all workers busy: workers=%d queued=%d, want %d and 4", workers, queued, n)
	}
}

// THREAD-2: cancelling the future cancels ctx, and a job cancelled before it
// started never runs; shutdown waits for jobs in flight and then refuses
// new ones; a closed loop refuses too.
func TestTHREAD2_CancelShutdownAndClosedLoop(t *testing.T) {
	var r eventLog
	started, release := make(chan struct{}), make(chan struct{})
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		defaultExecutor(l).max = 1 // one worker, so the second job must queue
		first := RunInExecutor(l, func(ctx context.Context) (int, error) {
			close(started)
			syncAwaitCtx(ctx)
			r.log("first: ctx %v", ctx.Err())
			<-release
			r.log("first returns")
			return 1, nil
		})
		second := RunInExecutor(l, func(context.Context) (int, error) {
			r.log("second ran")
			return 2, nil
		})
		//asynciovet:ignore blockingcall blocks the loop briefly on purpose: the worker needs nothing from it
		<-started // block the loop briefly: the worker needs nothing from it
		second.Cancel()
		first.Cancel() // its done callback cancels ctx
		_, err := first.Await(tk)
		r.log("first awaited: %s", describe(err))
		// Runs once main is suspended in ShutdownDefaultExecutor.
		releaser := startTask(tk, "releaser", func(*T) error {
			r.log("releasing first")
			close(release)
			return nil
		})
		err = ShutdownDefaultExecutor(tk)
		r.log("shutdown: %s, external=%d", describe(err), l.external.Load())
		_, err = RunInExecutor(l, func(context.Context) (int, error) { return 3, nil }).Await(tk)
		r.log("after shutdown: %s", describe(err))
		return tk.Await(releaser)
	})
	// The worker logs "first: ctx canceled" concurrently with the loop's
	// lines; it must come before "first returns". Check it, then drop it.
	var got []string
	sawCtx := false
	for _, line := range r.snapshot() {
		switch {
		case line == "first: ctx context canceled":
			sawCtx = true
			continue
		case line == "first returns" && !sawCtx:
			t.Errorf("first returned before seeing its ctx cancelled")
		}
		got = append(got, line)
	}
	checkEvents(t, []string{
		`first awaited: CancelledError("")`,
		"releasing first",
		"first returns",
		"shutdown: <nil>, external=0",
		`after shutdown: RuntimeError("Executor shutdown has been called")`,
	}, &eventLog{events: got})

	l := NewTestLoop()
	_ = l.Close()
	defer func() {
		if err, _ := recover().(error); !errors.Is(err, ErrLoopClosed) {
			t.Errorf("closed loop: got panic %v, want ErrLoopClosed", err)
		}
	}()
	RunInExecutor(l, func(context.Context) (int, error) { return 0, nil })
}

// RUN-3 step 3 (for Runner.Close): the helper runs the loop until the jobs
// still in flight have finished, and is a no-op for an unused executor.
func TestTHREAD2_ShutdownForRunnerWaitsForJobs(t *testing.T) {
	l := NewTestLoop()
	if err := shutdownDefaultExecutorForRunner(l); err != nil {
		t.Fatal(err)
	}
	if l.executor != nil {
		t.Error("the no-op shutdown created an executor")
	}
	release := make(chan struct{})
	var fut *Future[string]
	_ = l.RunUntilComplete(CreateTask(l, func(tk *T) (struct{}, error) {
		fut = RunInExecutor(l, func(context.Context) (string, error) { <-release; return "done", nil })
		close(release)
		return struct{}{}, nil
	}))
	if err := shutdownDefaultExecutorForRunner(l); err != nil {
		t.Fatal(err)
	}
	v, err := fut.Result() // delivered before the shutdown returned
	if v != "done" || err != nil {
		t.Errorf("job: %q %v", v, err)
	}
	_ = l.Close()
	if l.executor != nil {
		t.Error("Close left the executor registered")
	}
}

// THREAD-3: a task waiting in ToThread can be cancelled: it gets the CE at
// once, while fn is still running; fn sees ctx cancelled.
func TestTHREAD3_ToThreadCancelledTaskReturnsAtOnce(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		inFn, fnMayReturn, fnDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
		w := startTask(tk, "w", func(x *T) error {
			_, err := ToThread(x, func(ctx context.Context) (int, error) {
				close(inFn)
				syncAwaitCtx(ctx)
				<-fnMayReturn
				r.log("fn: %v", ctx.Err())
				close(fnDone)
				return 0, nil
			})
			r.log("task: %s", describe(err))
			return err
		})
		// Wait (off the loop) until fn runs.
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		_, _ = ToThread(tk, func(context.Context) (struct{}, error) { <-inFn; return struct{}{}, nil })
		w.Cancel("stop")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		r.log("task done, cancelled=%v", w.Cancelled())
		close(fnMayReturn)
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		_, _ = ToThread(tk, func(context.Context) (struct{}, error) { <-fnDone; return struct{}{}, nil })
		return nil
	})
	checkEvents(t, []string{
		`task: CancelledError("stop")`,
		"task done, cancelled=true",
		"fn: context canceled",
	}, &r)
}

// THREAD-3: ToThread runs fn in a copy of the caller's context: its ctx
// carries the task's ContextVar values.
func TestTHREAD3_ToThreadCarriesContextValues(t *testing.T) {
	v := NewContextVar("v", "")
	runVirtual(t, func(tk *T) error {
		v.Set(tk, "from the task")
		got, err := ToThread(tk, func(ctx context.Context) (string, error) { return v.Value(ctx), nil })
		if got != "from the task" || err != nil {
			t.Errorf("ToThread saw %q %v", got, err)
		}
		return nil
	})
}

// Close cancels the context of every executor job: a running job is asked
// to return and one still queued never runs, so no goroutine the loop
// started outlives it (issue 11, shutdown). asyncio cannot stop its
// threads; this is the Go divergence.
func TestTHREAD2_CloseCancelsRunningAndQueuedJobs(t *testing.T) {
	l := NewLoop()
	running := make(chan struct{})
	jobDone := make(chan string, 1)
	RunInExecutor(l, func(ctx context.Context) (int, error) {
		close(running)
		<-ctx.Done() // no other way out: without the cancellation this leaks
		if cause := context.Cause(ctx); !errors.Is(cause, ErrLoopClosed) || ctx.Err() != context.Canceled {
			jobDone <- fmt.Sprintf("running job saw %v (cause %v), want context.Canceled caused by ErrLoopClosed", ctx.Err(), cause)
		} else {
			jobDone <- "ok"
		}
		return 0, ctx.Err()
	})
	ex := l.executor
	ex.mu.Lock()
	ex.max = 1 // the next job stays queued behind the first
	ex.mu.Unlock()
	queuedRan := false
	RunInExecutor(l, func(ctx context.Context) (int, error) { queuedRan = true; return 0, nil })
	<-running
	mustClose(t, l)
	if got := <-jobDone; got != "ok" {
		t.Error(got)
	}
	ex.inflight.Wait()
	if queuedRan {
		t.Error("the queued job ran after Close")
	}
}

// RUN-3 step 3: Run ends although a fire-and-forget executor job waits on
// its context. After the join timeout (CPython: 300 s, then a warning)
// the jobs' contexts are cancelled and the shutdown gives up waiting; a
// job that honours its ctx then returns, and nothing is left running.
// (The timeout is shortened; the outcome does not depend on timing: the
// job can only end through the cancellation.)
func TestRUN3_RunEndsWhenAnExecutorJobWaitsOnItsContext(t *testing.T) {
	defer func(d time.Duration) { executorJoinTimeout = d }(executorJoinTimeout)
	executorJoinTimeout = time.Millisecond
	jobEnded := make(chan error, 1)
	v, err := Run(func(tk *T) (string, error) {
		RunInExecutor(tk, func(ctx context.Context) (int, error) {
			<-ctx.Done() // a well-behaved job that runs until told to stop
			jobEnded <- context.Cause(ctx)
			return 0, ctx.Err()
		})
		return "main done", nil
	})
	if v != "main done" || err != nil {
		t.Fatalf("Run = %q, %v", v, err)
	}
	if cause := <-jobEnded; !errors.Is(cause, ErrLoopClosed) {
		t.Errorf("the job's ctx ended with %v, want a cause wrapping ErrLoopClosed", cause)
	}
}

// A RunInExecutor job's context says why it ended, as a Go call's does:
// context.Cause is the future's *CancelledError, with its message, when
// the future is cancelled (and an error wrapping ErrLoopClosed at Close,
// TestTHREAD2_CloseCancelsRunningAndQueuedJobs); ctx.Err() is
// context.Canceled either way.
func TestRunInExecutorContextCause(t *testing.T) {
	started := make(chan struct{})
	causes := make(chan error, 1)
	runVirtual(t, func(tk *T) error {
		job := RunInExecutor(tk, func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done()
			if ctx.Err() != context.Canceled {
				t.Errorf("ctx.Err() = %v, want context.Canceled", ctx.Err())
			}
			causes <- context.Cause(ctx)
			return 0, nil
		})
		//asynciovet:ignore blockingcall blocks the loop briefly on purpose: the worker needs nothing from it
		<-started
		job.Cancel("no longer needed")
		if _, err := job.Await(tk); !IsCancelled(err) {
			t.Errorf("await: %v, want the cancellation", err)
		}
		return ShutdownDefaultExecutor(tk) // the job returns once its ctx is done
	})
	var ce *CancelledError
	if cause := <-causes; !errors.As(cause, &ce) || ce.Msg != "no longer needed" {
		t.Errorf("context.Cause = %v, want the future's *CancelledError(\"no longer needed\")", cause)
	}
}

// A function that ends its goroutine with runtime.Goexit (t.FailNow in a
// test) fails its call with errFuncGoexit instead of leaving the caller
// waiting for ever: for Go, ToThread and RunInExecutor. The default
// executor keeps its size (each lost worker is replaced), so later jobs
// still run, ShutdownDefaultExecutor returns, and Run's Close does not wait
// for jobs that will never finish. (The caller waited for ever; after
// NumCPU+4 such jobs every later ToThread queued for ever.)
func TestGoexitInAnOutsideFunctionFailsTheCall(t *testing.T) {
	goexit := func(context.Context) (int, error) { runtime.Goexit(); return 0, nil }
	_, err := Run(func(tk *T) (struct{}, error) {
		if _, err := Go(tk, goexit); !errors.Is(err, errFuncGoexit) {
			t.Errorf("Go: %v", err)
		}
		for i := range defaultExecutorWorkers() + 2 {
			if _, err := ToThread(tk, goexit); !errors.Is(err, errFuncGoexit) {
				t.Errorf("ToThread %d: %v", i, err)
			}
		}
		if _, err := RunInExecutor(tk, goexit).Await(tk); !errors.Is(err, errFuncGoexit) {
			t.Errorf("RunInExecutor: %v", err)
		}
		if v, err := ToThread(tk, func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
			t.Errorf("ToThread after the Goexits: %d, %v", v, err)
		}
		return struct{}{}, ShutdownDefaultExecutor(tk)
	})
	if err != nil {
		t.Fatal(err)
	}
}
