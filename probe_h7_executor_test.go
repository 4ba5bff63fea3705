package asyncio

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
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
