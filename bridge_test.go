package asyncio

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Go runs fn off the loop: while fn blocks, the loop runs other tasks
// (here the one that unblocks fn), and Go returns fn's result. On virtual
// time the call is outside work: the loop waits for it (no ErrDeadlock)
// and no virtual time passes.
func TestGoAwaitsBlockingCallWithoutHoldingLoop(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		release := make(chan struct{})
		other := startTask(tk, "other", func(o *T) error {
			r.log("other runs while fn blocks")
			close(release)
			return nil
		})
		v, err := Go(tk, func(context.Context) (string, error) {
			<-release
			return "result", nil
		})
		r.log("Go: %q %v at %v, external=%d", v, err, tk.Loop().Time(), tk.Loop().Stats().External)
		return tk.Await(other)
	})
	checkEvents(t, []string{"other runs while fn blocks", `Go: "result" <nil> at 0s, external=0`}, &r)
}

// fn's error comes back as Go's error; a panic in fn as a *PanicError;
// fn's ctx carries the task's context values.
func TestGoErrorsPanicsAndValues(t *testing.T) {
	v := NewContextVar("v", "")
	var r eventLog
	runVirtual(t, func(tk *T) error {
		_, err := Go(tk, func(context.Context) (int, error) { return 0, errBoom })
		r.log("error: %s", describe(err))
		_, err = Go(tk, func(context.Context) (int, error) { panic("kaboom") })
		var pe *PanicError
		r.log("panic: %v %v", errors.As(err, &pe), pe.Value)
		v.Set(tk, "task value")
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		got, _ := Go(tk, func(ctx context.Context) (string, error) { return v.Value(ctx), nil })
		r.log("value: %s", got)
		return nil
	})
	checkEvents(t, []string{`error: *errors.errorString("boom")`, "panic: true kaboom", "value: task value"}, &r)
}

// Cancelling the awaiting task returns the CancelledError at once, while
// fn still runs: fn's ctx is cancelled (its cause is the cancellation),
// the loop stops counting the call, and fn's late result is dropped.
func TestGoCancelReturnsAtOnce(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		inFn, fnMayReturn, fnDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var fnSaw string
		w := startTask(tk, "w", func(x *T) error {
			_, err := Go(x, func(ctx context.Context) (int, error) {
				close(inFn)
				<-ctx.Done()
				fnSaw = fmt.Sprintf("ctx %v, cause %s", ctx.Err(), describe(context.Cause(ctx)))
				<-fnMayReturn
				close(fnDone)
				return 42, nil
			})
			r.log("w: %s, external=%d", describe(err), l.Stats().External)
			return err
		})
		// Wait off the loop until fn runs.
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		_, _ = Go(tk, func(context.Context) (int, error) { <-inFn; return 0, nil })
		w.Cancel("stop")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		close(fnMayReturn)
		//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
		_, _ = Go(tk, func(context.Context) (int, error) { <-fnDone; return 0, nil })
		r.log("fn: %s", fnSaw)
		return nil
	})
	checkEvents(t, []string{
		`w: CancelledError("stop"), external=0`,
		`fn: ctx context canceled, cause CancelledError("stop")`,
	}, &r)
}

// Calls are not bounded like the default executor: 3x its worker count
// of calls, each waiting until all of them have started, complete.
func TestGoCallsAreNotPooled(t *testing.T) {
	n := 3 * defaultExecutorWorkers()
	var started sync.WaitGroup
	started.Add(n)
	runVirtual(t, func(tk *T) error {
		tasks := make([]*Task[int], n)
		for i := range tasks {
			tasks[i] = CreateTask(tk, func(x *T) (int, error) {
				return Go(x, func(context.Context) (int, error) {
					started.Done()
					started.Wait()
					return i, nil
				})
			})
		}
		res, err := Gather(tk, Awaitables(tasks)...).Await(tk)
		if err != nil || len(res) != n || res[n-1] != n-1 {
			t.Errorf("gather: %v %v", res, err)
		}
		return nil
	})
}

// Misuse panics before anything starts: a nil task or function (a
// *ValueError), a call from a plain callback (not the running task).
func TestGoMisuse(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		fn := func(context.Context) (int, error) { return 0, nil }
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		r.log("nil task: %v", mustPanic(t, "Go(nil)", func() { Go(nil, fn) }))
		//asynciovet:ignore droppedcancel the call must panic (misuse under test): no error is produced
		r.log("nil fn: %v", mustPanic(t, "Go(t, nil)", func() { Go[int](tk, nil) }))
		done := NewFuture[any](tk)
		tk.Loop().CallSoon(func() {
			defer func() { done.SetResult(recover()) }()
			//asynciovet:ignore droppedcancel test scaffolding: waits off the loop for a signal of the test
			Go(tk, fn)
		})
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		p, _ := done.Await(tk)
		r.log("from a callback: runtime error %v, external=%d", errors.Is(p.(error), ErrRuntime), tk.Loop().Stats().External)
		return nil
	})
	checkEvents(t, []string{
		"nil task: asyncio: Go: nil task",
		"nil fn: asyncio: Go: nil function",
		"from a callback: runtime error true, external=0",
	}, &r)
}

// A call whose function still runs when the loop closes: Close cancels its
// context (cause ErrLoopClosed) and reports it to the exception handler,
// without waiting; the goroutine ends as soon as fn returns.
func TestGoCallOutlivingLoopIsCancelledAndReported(t *testing.T) {
	l := NewTestLoop()
	var r eventLog
	handlerLog(l, &r)
	fnDone := make(chan struct{})
	//asynciovet:ignore unawaitedtask the loop closes with this task pending, on purpose
	CreateTask(l, func(tk *T) (int, error) {
		return Go(tk, func(ctx context.Context) (int, error) {
			defer close(fnDone)
			<-ctx.Done()
			r.log("fn: cause %v", errors.Is(context.Cause(ctx), ErrLoopClosed))
			return 0, nil
		})
	}, WithName("caller"))
	runOne(t, l) // the task starts and awaits the call
	mustClose(t, l)
	<-fnDone
	lines := r.snapshot()
	if len(lines) != 3 || lines[0] != "handler: Task was destroyed but it is pending!" ||
		lines[1] != "handler: Go call github.com/go-asyncio/asyncio.TestGoCallOutlivingLoopIsCancelledAndReported.func1.1 still running when the event loop closed; its context is cancelled" ||
		lines[2] != "fn: cause true" {
		t.Errorf("log: %q", lines)
	}
}

// goExecutor is a user executor: one goroutine per job, or a refusal.
type goExecutor struct{ refuse error }

func (e goExecutor) Submit(job func()) error {
	if e.refuse != nil {
		return e.refuse
	}
	go job()
	return nil
}

// panicExecutor panics in Submit.
type panicExecutor struct{}

func (panicExecutor) Submit(func()) error { panic("submit exploded") }

// holdExecutor keeps the jobs it is given and never runs them.
type holdExecutor struct{ jobs []func() }

func (e *holdExecutor) Submit(job func()) error { e.jobs = append(e.jobs, job); return nil }

// RunInExecutorOn with a user executor: the result comes back; a refused
// submission fails the future with the executor's error, a panicking
// Submit with a *PanicError; an executor that never runs the job holds the
// virtual clock only until the awaiting task is cancelled. Nil arguments
// panic with a *ValueError.
func TestRunInExecutorOnUserExecutor(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		v, err := RunInExecutorOn(tk, goExecutor{}, func(context.Context) (int, error) { return 7, nil }).Await(tk)
		r.log("go executor: %d %v", v, err)
		_, err = RunInExecutorOn(tk, goExecutor{refuse: errBoom}, func(context.Context) (int, error) { return 0, nil }).Await(tk)
		r.log("refused: %s", describe(err))
		_, err = RunInExecutorOn(tk, panicExecutor{}, func(context.Context) (int, error) { return 0, nil }).Await(tk)
		var pe *PanicError
		r.log("panicking Submit: %v %v", errors.As(err, &pe), pe.Value)
		hold := &holdExecutor{}
		var jobCtx context.Context
		w := startTask(tk, "w", func(x *T) error {
			_, err := RunInExecutorOn(x, hold, func(ctx context.Context) (int, error) { jobCtx = ctx; return 0, nil }).Await(x)
			r.log("w: %s", describe(err))
			return err
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		w.Cancel("give up")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		hold.jobs[0]() // runs late: cancelled while queued, its function never runs (h30)
		r.log("late job ran: %v; external=%d", jobCtx != nil, tk.Loop().Stats().External)
		r.log("nil executor: %v", mustPanic(t, "nil ex", func() {
			RunInExecutorOn(tk, nil, func(context.Context) (int, error) { return 0, nil })
		}))
		r.log("nil fn: %v", mustPanic(t, "nil fn", func() { RunInExecutorOn[int](tk, goExecutor{}, nil) }))
		return nil
	})
	checkEvents(t, []string{
		"go executor: 7 <nil>",
		`refused: *errors.errorString("boom")`,
		"panicking Submit: true submit exploded",
		`w: CancelledError("give up")`,
		"late job ran: false; external=0",
		"nil executor: asyncio: RunInExecutorOn: nil executor",
		"nil fn: asyncio: RunInExecutorOn: nil function",
	}, &r)
}

// ExpectExternal: a future completed from a goroutine the loop knows
// nothing about. Held, the virtual clock waits for it (the 1 h timeout
// does not fire, no ErrDeadlock); release is idempotent, may be called
// from any goroutine, and after the loop closed.
func TestExpectExternal(t *testing.T) {
	var release func()
	var r eventLog
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		fut := NewFuture[string](tk)
		release = l.ExpectExternal()
		go func() {
			defer release()
			l.CallSoonThreadsafe(func() { fut.SetResult("from outside") })
		}()
		v, err := WaitFor(tk, Never-1, fut)
		r.log("%q %v at %v", v, err, l.Time())
		release() // again: no effect
		for l.Stats().External != 0 {
			if err := Sleep(tk, 0); err != nil {
				return err
			}
		}
		r.log("external=0")
		return nil
	})
	release() // after Close
	checkEvents(t, []string{`"from outside" <nil> at 0s`, "external=0"}, &r)
}

// BenchmarkGo is the cost of one Go call with a trivial function, awaited
// by a task on a real-clock loop (a goroutine start, the result back
// through CallSoonThreadsafe, the loop woken); "raw-go" is a goroutine
// start and a channel receive, for scale.
func BenchmarkGo(b *testing.B) {
	b.Run("bridge", func(b *testing.B) {
		b.ReportAllocs()
		_, err := Run(func(tk *T) (struct{}, error) {
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Go(tk, func(context.Context) (int, error) { return i, nil }); err != nil {
					return struct{}{}, err
				}
			}
			return struct{}{}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
	b.Run("raw-go", func(b *testing.B) {
		b.ReportAllocs()
		ch := make(chan int)
		for i := 0; i < b.N; i++ {
			go func() { ch <- i }()
			<-ch
		}
	})
}

// RunInExecutorOn is run_in_executor(executor, fn), which passes no
// contextvars on (THREAD-2) and whose job belongs to no task: fn's ctx
// has none of the calling task's values, and the end of a Go context
// bound to that task (WithContext) does not cancel the job, as for
// RunInExecutor. (Once it carried the task's context: the job saw
// "task-value", and the queued job failed with context.Canceled.)
func TestRunInExecutorOnNoTaskContext(t *testing.T) {
	v := NewContextVar("v", "default")
	var r eventLog
	runVirtual(t, func(tk *T) error {
		hold := &holdExecutor{}
		bound, cancel := context.WithCancel(context.Background())
		defer cancel()
		var fut *Future[string]
		w := CreateTaskErr(tk, func(x *T) error {
			v.Set(x, "task-value")
			fut = RunInExecutorOn(x, hold, func(ctx context.Context) (string, error) {
				return fmt.Sprintf("%s, ctx err %v", v.Value(ctx), ctx.Err()), nil
			})
			return nil
		}, WithContext(bound))
		if err := tk.Await(w); err != nil {
			return err
		}
		cancel()
		hold.jobs[0]()
		got, err := fut.Await(tk)
		r.log("job: %s; %v", got, err)
		return nil
	})
	checkEvents(t, []string{"job: default, ctx err <nil>; <nil>"}, &r)
}
