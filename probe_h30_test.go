package asyncio

// Probes of h30 (tests/ports p97-p110).

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

// In asyncio a done callback runs from a Handle (call_soon), so an
// exception escaping it reaches the exception handler with the handle in
// the context (p97). Done callbacks run here from the ready queue without
// a Handle, and the report had none.
func TestH30_DoneCallbackPanicReportNamesAHandle(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	var got []ExceptionContext
	l.SetExceptionHandler(func(_ *Loop, ctx ExceptionContext) { got = append(got, ctx) })
	boom := errors.New("boom")
	err := l.RunUntilComplete(CreateTask(l, func(t *T) (struct{}, error) {
		f := NewFuture[int](t)
		f.AddDoneCallback(func() { panic(boom) })
		l.CallSoon(func() { panic(boom) })
		f.SetResult(1)
		return struct{}{}, Sleep(t, 0)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d reports, want 2", len(got))
	}
	for i, ctx := range got {
		if ctx.Handle == nil || !errors.Is(ctx.Err, boom) {
			t.Errorf("report %d: handle %v, err %v; want a handle and boom", i, ctx.Handle, ctx.Err)
		}
	}
}

// h30Queue is a one-worker executor whose jobs run when the test says.
type h30Queue struct{ jobs chan func() }

func (q *h30Queue) Submit(fn func()) error { q.jobs <- fn; return nil }

// A job of RunInExecutorOn whose future is cancelled while it waits in
// the executor's queue never runs, as concurrent.futures' pending future
// cancelled by run_in_executor's wrap_future (tests/ports p110: a
// one-worker ThreadPoolExecutor). RunInExecutor's own pool skipped it; a
// custom executor's job ran fn anyway.
func TestH30_RunInExecutorOnSkipsAJobCancelledWhileQueued(t *testing.T) {
	q := &h30Queue{jobs: make(chan func(), 4)}
	var ran atomic.Int32
	_, err := Run(func(tk *T) (struct{}, error) {
		f := RunInExecutorOn(tk, q, func(context.Context) (int, error) { ran.Add(1); return 1, nil })
		f.Cancel()
		job, _, err := Recv(tk, q.jobs)
		if err != nil {
			return struct{}{}, err
		}
		done := make(chan struct{})
		go func() { job(); close(done) }()
		if _, _, err := Recv(tk, done); err != nil {
			return struct{}{}, err
		}
		if _, err := f.Await(tk); !IsCancelled(err) {
			t.Errorf("await: %v, want a cancellation", err)
		}
		return struct{}{}, nil
	}, WithVirtualTime())
	if err != nil {
		t.Fatal(err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the cancelled job's function ran %d times, want 0", n)
	}
}
