package asyncio

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// h7HoldingExecutor keeps the jobs it is given until the test runs them.
type h7HoldingExecutor struct {
	mu   sync.Mutex
	jobs []func()
}

func (e *h7HoldingExecutor) Submit(job func()) error {
	e.mu.Lock()
	e.jobs = append(e.jobs, job)
	e.mu.Unlock()
	return nil
}

func (e *h7HoldingExecutor) runAll() {
	e.mu.Lock()
	jobs := e.jobs
	e.jobs = nil
	e.mu.Unlock()
	for _, j := range jobs {
		j()
	}
}

// A job cancelled while it waits in the queue of a SetDefaultExecutor
// executor is over at once, as RunInExecutorOn's is: it no longer holds
// a virtual clock (the loop waited for it for ever, reporting a stalled
// clock) nor ShutdownDefaultExecutor, and it never runs when the
// executor gets round to it.
func TestH7CancelledQueuedJobOnCustomExecutor(t *testing.T) {
	ex := &h7HoldingExecutor{}
	var ran atomic.Int32
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		if err := l.SetDefaultExecutor(ex); err != nil {
			return err
		}
		base := l.external.Load()
		fut := RunInExecutor(tk, func(context.Context) (int, error) { ran.Add(1); return 1, nil })
		if got := l.external.Load(); got != base+1 {
			t.Errorf("a queued job counts %d as outside work, want 1", got-base)
		}
		fut.Cancel()
		for range 2 {
			if err := Sleep(tk, 0); err != nil {
				return err
			}
		}
		if got := l.external.Load(); got != base {
			t.Errorf("a job cancelled in the queue still counts %d as outside work, want 0", got-base)
			l.addExternal(base - got) // (else the loop waits for it for ever)
		}
		if l.executor.undelivered != 0 {
			t.Errorf("ShutdownDefaultExecutor would wait for %d cancelled job(s)", l.executor.undelivered)
			l.executor.undelivered = 0
		}
		return ShutdownDefaultExecutor(tk)
	})
	ex.runAll()
	if n := ran.Load(); n != 0 {
		t.Errorf("the cancelled job ran %d time(s) when the executor got round to it", n)
	}
}

// The built-in pool: a job cancelled while every worker is busy never
// runs either, and the busy jobs still come back.
func TestH7CancelledQueuedJobOnBuiltinPool(t *testing.T) {
	var ran atomic.Int32
	runVirtual(t, func(tk *T) error {
		release := make(chan struct{})
		var busy []*Future[int]
		for range defaultExecutorWorkers() {
			busy = append(busy, RunInExecutor(tk, func(context.Context) (int, error) { <-release; return 2, nil }))
		}
		queued := RunInExecutor(tk, func(context.Context) (int, error) { ran.Add(1); return 1, nil })
		queued.Cancel()
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		close(release)
		for _, f := range busy {
			if v, err := f.Await(tk); v != 2 || err != nil {
				t.Errorf("a busy job: %d, %v", v, err)
			}
		}
		return ShutdownDefaultExecutor(tk)
	})
	if n := ran.Load(); n != 0 {
		t.Errorf("the cancelled job ran %d time(s)", n)
	}
}

// Jobs in flight on three executors in turn (two of SetDefaultExecutor's
// and the built-in pool): each comes back from where it was submitted,
// and ShutdownDefaultExecutor waits for all of them, then refuses.
func TestH7SwitchExecutorsWithJobsInFlight(t *testing.T) {
	a, b := &h7HoldingExecutor{}, &h7HoldingExecutor{}
	var ran sync.WaitGroup
	defer ran.Wait()
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		release := make(chan struct{})
		pool := RunInExecutor(tk, func(context.Context) (string, error) { <-release; return "pool", nil })
		if err := l.SetDefaultExecutor(a); err != nil {
			return err
		}
		onA := RunInExecutor(tk, func(context.Context) (string, error) { return "a", nil })
		if err := l.SetDefaultExecutor(b); err != nil {
			return err
		}
		onB := RunInExecutor(tk, func(context.Context) (string, error) { return "b", nil })
		if err := l.SetDefaultExecutor(a); err != nil {
			return err
		}
		onA2 := RunInExecutor(tk, func(context.Context) (string, error) { return "a2", nil })
		shut := CreateTask(tk, func(t *T) (struct{}, error) { return struct{}{}, ShutdownDefaultExecutor(t) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		refused := RunInExecutor(tk, func(context.Context) (string, error) { return "late", nil })
		if _, err := refused.Await(tk); err == nil || !strings.Contains(err.Error(), "Executor shutdown has been called") {
			t.Errorf("a job after the shutdown: %v", err)
		}
		ran.Add(2)
		go func() { defer ran.Done(); a.runAll() }()
		go func() { defer ran.Done(); b.runAll() }()
		close(release)
		for want, f := range map[string]*Future[string]{"pool": pool, "a": onA, "b": onB, "a2": onA2} {
			if v, err := f.Await(tk); v != want || err != nil {
				t.Errorf("job %s: %q, %v", want, v, err)
			}
		}
		_, err := shut.Await(tk)
		return err
	})
}

// h7InlineExecutor runs each job at once, inside Submit, on the loop's
// goroutine.
type h7InlineExecutor struct{ n atomic.Int32 }

func (e *h7InlineExecutor) Submit(job func()) error { e.n.Add(1); job(); return nil }

// An executor that runs the job inside Submit, on the loop's goroutine,
// does not deadlock the loop: the outcome still comes back through the
// loop, ShutdownDefaultExecutor waits for it and the clock is not held.
func TestH7InlineExecutor(t *testing.T) {
	ex := &h7InlineExecutor{}
	runVirtual(t, func(tk *T) error {
		if err := tk.Loop().SetDefaultExecutor(ex); err != nil {
			return err
		}
		v, err := ToThread(tk, func(context.Context) (int, error) { return 5, nil })
		if v != 5 || err != nil {
			t.Errorf("ToThread = %d, %v", v, err)
		}
		f := RunInExecutor(tk, func(context.Context) (int, error) { return 6, nil })
		start := tk.Loop().Time()
		if err := Sleep(tk, time.Minute); err != nil {
			return err
		}
		if d := tk.Loop().Time() - start; d != time.Minute {
			t.Errorf("the virtual clock moved %v, want 1m", d)
		}
		if v, err := f.Await(tk); v != 6 || err != nil {
			t.Errorf("RunInExecutor = %d, %v", v, err)
		}
		return ShutdownDefaultExecutor(tk)
	})
	if n := ex.n.Load(); n != 2 {
		t.Errorf("the executor got %d jobs, want 2", n)
	}
}

// Loop.Close with jobs still queued on a WithDefaultExecutor executor:
// Close returns, and when the executor runs them later they do not call
// their function, nor reach the closed loop (the goroutines Close's
// cancellation starts end: goleak checks).
func TestH7LoopCloseWithJobsQueuedOnCustomExecutor(t *testing.T) {
	ex := &h7HoldingExecutor{}
	var ran atomic.Int32
	l := NewLoop(WithVirtualTime(), WithDefaultExecutor(ex))
	var futs []*Future[int]
	task := CreateTask(l, func(tk *T) (struct{}, error) {
		for range 3 {
			futs = append(futs, RunInExecutor(tk, func(context.Context) (int, error) { ran.Add(1); return 1, nil }))
		}
		return struct{}{}, nil
	})
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatalf("RunUntilComplete: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ex.runAll()
	if n := ran.Load(); n != 0 {
		t.Errorf("%d job(s) ran after their loop closed", n)
	}
	for i, f := range futs {
		if f.Done() {
			t.Errorf("job %d's future completed on a closed loop", i)
		}
	}
}
