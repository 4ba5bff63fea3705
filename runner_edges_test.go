//go:build go1.25

package asyncio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// ---- Runner semantics

// Runner.Close from a task of the runner's own running loop is refused
// with the error loop.close() gives, before anything changes, and the
// runner stays open: the Close after the run closes the loop. CPython 3.13
// also leaves the runner open (loop.close() raises in the finally clause
// before self._state = CLOSED) but first cancels every task:
//
//	r = asyncio.Runner()
//	async def main():
//	    try:
//	        r.close()
//	    except Exception as e:
//	        print("close inside:", type(e).__name__, e)
//	    await asyncio.sleep(0)   # CancelledError: the failed close cancelled main
//
// prints "close inside: RuntimeError Cannot close a running event loop".
// Here main is not cancelled: a refused call changes nothing (README.md,
// "Where Go differs").
func TestRunnerEdge_CloseFromInsideTheRunningLoop(t *testing.T) {
	r := NewRunner(WithVirtualTime())
	var insideErr error
	v, err := RunWith(r, func(tk *T) (int, error) {
		insideErr = r.Close()
		// A refused Close left nothing behind that stops the loop later.
		child := CreateTask(tk.Loop(), func(tk *T) (int, error) { return 2, Sleep(tk, time.Second) })
		n, err := child.Await(tk)
		return 1 + n, err
	})
	if !errors.Is(insideErr, ErrRuntime) || insideErr.Error() != "Cannot close a running event loop" {
		t.Errorf("Close inside the running loop = %v, want the RuntimeError Cannot close a running event loop", insideErr)
	}
	if v != 3 || err != nil {
		t.Errorf("RunWith = %d, %v; want 3, nil (main and its child not cancelled by the refused Close)", v, err)
	}
	if cerr := r.Close(); cerr != nil {
		t.Errorf("Close after the run: %v", cerr)
	}
	l := r.loop
	if !l.IsClosed() {
		t.Errorf("after a refused Close and a second Close the runner's loop is still open: " +
			"the refused Close marked the runner closed, so the second one did nothing")
		_ = l.Close() // do not leak its pooled goroutines into other tests
	}
}

// RunWith on a new Runner from a task of a running loop. RunWith is
// "asyncio's Runner.run" (runner.go:57) and has the message for this case
// (runner.go:72); CPython 3.13 rejects it whichever runner's loop runs:
//
//	async def main():
//	    with asyncio.Runner() as r2:
//	        try:
//	            r2.run(asyncio.sleep(0))
//	        except RuntimeError as e:
//	            print("nested Runner.run:", e)
//	asyncio.run(main())
//
// prints "nested Runner.run: Runner.run() cannot be called from a running
// event loop". The README's table (README.md "running a loop, or
// asyncio.run, inside a running loop") lists asyncio.Run as rejected and
// only RunForever/RunUntilComplete of another loop as not rejected; Run
// itself refuses this case (runner.go:146, callerRunsALoop).
func TestRunnerEdge_RunWithAnotherRunnerInsideARunningLoop(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		r2 := NewRunner(WithVirtualTime())
		defer r2.Close()
		ran := false
		_, err := RunWith(r2, func(*T) (int, error) { ran = true; return 0, nil })
		if ran || !errors.Is(err, ErrRuntime) || err == nil ||
			err.Error() != "Runner.run() cannot be called from a running event loop" {
			t.Errorf("RunWith(new runner) inside a running loop: ran=%v err=%v; want the RuntimeError "+
				"Runner.run() cannot be called from a running event loop, main not run", ran, err)
		}
		return nil
	})
}

// ---- virtual time exactness

// Deadlines that coincide exactly, on the virtual clock, as CPython 3.13
// orders them (timers at the same when run in scheduling order, after the
// earlier ones; a callback one of them schedules runs after the others; a
// timeout firing in the same iteration as the completion of what the task
// awaits cancels the task all the same). Ran with
// `PYENV_VERSION=3.13.0 python3` (real clock; equal deadlines through
// call_at and timeout_at with the same when):
//
//	fut = loop.create_future(); loop.call_at(when, fut.set_result, "value")
//	async with asyncio.timeout_at(when): await fut          # 1
//	async with asyncio.timeout_at(when):
//	    loop.call_at(when, fut.set_result, "value"); await fut   # 2
//	t = create_task(inner())  # inner awaits a future set by call_at(when)
//	async with asyncio.timeout_at(when): await t             # 3
//	loop.call_at(when, A)  # A appends "A" and call_soon(append "B")
//	loop.call_at(when, append "C"); loop.call_at(when-0.01, append "early")  # 4
//
// prints "1 TimeoutError, fut done: True", "2 TimeoutError",
// "3 TimeoutError, inner cancelled: True",
// "4 ['early', 'A', 'C', 'B']".
func TestRunnerEdge_EqualDeadlinesOnVirtualTime(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error { return equalDeadlines(tk, &r) })
	checkEqualDeadlines(t, &r)
}

// equalDeadlines runs the scenarios of TestRunnerEdge_EqualDeadlines* on
// tk's loop and logs their outcomes.
func equalDeadlines(tk *T, r *eventLog) error {
	l := tk.Loop()
	// 1: the future's timer was scheduled before the timeout.
	when := l.Time() + 50*time.Millisecond
	fut := NewFuture[string](tk)
	l.CallAt(when, func() { _ = fut.SetResult("value") })
	err := TimeoutAt(tk, when, func(*TimeoutScope) error {
		v, err := fut.Await(tk)
		if err == nil {
			r.log("1 got %s", v)
		}
		return err
	})
	if err != nil {
		r.log("1 %s, fut done: %v", timeoutTraits(err), fut.Done())
	}
	// 2: the timeout first, then the future's timer.
	when = l.Time() + 50*time.Millisecond
	fut2 := NewFuture[string](tk)
	err = TimeoutAt(tk, when, func(*TimeoutScope) error {
		l.CallAt(when, func() {
			if !fut2.Done() {
				_ = fut2.SetResult("value")
			}
		})
		v, err := fut2.Await(tk)
		if err == nil {
			r.log("2 got %s", v)
		}
		return err
	})
	if err != nil {
		r.log("2 %s", timeoutTraits(err))
	}
	// 3: Timeout(d) around a task that finishes exactly at d.
	when = l.Time() + 50*time.Millisecond
	inner := CreateTask(tk, func(tk *T) (string, error) {
		f := NewFuture[struct{}](tk)
		l.CallAt(when, func() { _ = f.SetResult(struct{}{}) })
		if _, err := f.Await(tk); err != nil {
			return "", err
		}
		return "inner value", nil
	})
	if err := Sleep(tk, 0); err != nil {
		return err
	}
	err = TimeoutAt(tk, when, func(*TimeoutScope) error {
		v, err := inner.Await(tk)
		if err == nil {
			r.log("3 got %s", v)
		}
		return err
	})
	if err != nil {
		r.log("3 %s, inner cancelled: %v", timeoutTraits(err), inner.Cancelled())
	}
	// 4: ordering at one deadline.
	when = l.Time() + 50*time.Millisecond
	var order []string
	l.CallAt(when, func() { order = append(order, "A"); l.CallSoon(func() { order = append(order, "B") }) })
	l.CallAt(when, func() { order = append(order, "C") })
	l.CallAt(when-10*time.Millisecond, func() { order = append(order, "early") })
	if err := Sleep(tk, 100*time.Millisecond); err != nil {
		return err
	}
	r.log("4 %v", order)
	// Sleep(d) inside Timeout(d): both deadlines are the same instant.
	start := l.Time()
	err = Timeout(tk, time.Second, func(*TimeoutScope) error { return Sleep(tk, time.Second) })
	r.log("5 %s after %v", timeoutTraits(err), l.Time()-start)
	// WaitFor at exactly the deadline of what it waits for.
	start = l.Time()
	_, err = WaitForFunc(tk, time.Second, func(tk *T) (int, error) { return 1, Sleep(tk, time.Second) })
	r.log("6 %s after %v", timeoutTraits(err), l.Time()-start)
	return nil
}

func checkEqualDeadlines(t *testing.T, r *eventLog) {
	t.Helper()
	checkEvents(t, []string{
		"1 " + timeoutTraits(&TimeoutError{Cause: &CancelledError{}}) + ", fut done: true",
		"2 " + timeoutTraits(&TimeoutError{Cause: &CancelledError{}}),
		"3 " + timeoutTraits(&TimeoutError{Cause: &CancelledError{}}) + ", inner cancelled: true",
		"4 [early A C B]",
		"5 " + timeoutTraits(&TimeoutError{Cause: &CancelledError{}}) + " after 1s",
		"6 " + timeoutTraits(&TimeoutError{Cause: &CancelledError{}}) + " after 1s",
	}, r)
}

// Outside work takes no virtual time and holds the clock while it runs.
// README.md "Virtual time": "Go calls, executor jobs and waiting channel
// operations are *outside work*: a loop on virtual time waits for them
// instead of moving its clock (they take no virtual time) [...] a timeout
// on that clock cannot fire while it runs". Each function here returns
// only once the loop is blocked waiting for it, with a timer due 1ns later
// and a 1ns Timeout around the call: neither may fire, and the clock must
// still read 0 when the call is back.
func TestRunnerEdge_OutsideWorkHoldsTheVirtualClock(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		fired := false
		l.CallLater(time.Nanosecond, func() { fired = true })
		waitForLoop := func(context.Context) (int, error) {
			waitUntilSleeping(l) // the loop waits for this very call
			return 7, nil
		}
		calls := []struct {
			name string
			call func() (int, error)
		}{
			{"Go", func() (int, error) { return Go(tk, waitForLoop) }},
			{"ToThread", func() (int, error) { return ToThread(tk, waitForLoop) }},
			{"RunInExecutor", func() (int, error) { return RunInExecutor(tk, waitForLoop).Await(tk) }},
		}
		for _, c := range calls {
			var v int
			err := Timeout(tk, time.Nanosecond, func(*TimeoutScope) error {
				var err error
				v, err = c.call()
				return err
			})
			r.log("%s: %d %v at %v, timer fired: %v", c.name, v, err, l.Time(), fired)
		}
		if err := Sleep(tk, time.Nanosecond); err != nil {
			return err
		}
		r.log("after Sleep(1ns): at %v, timer fired: %v", l.Time(), fired)
		return nil
	})
	checkEvents(t, []string{
		"Go: 7 <nil> at 0s, timer fired: false",
		"ToThread: 7 <nil> at 0s, timer fired: false",
		"RunInExecutor: 7 <nil> at 0s, timer fired: false",
		"after Sleep(1ns): at 1ns, timer fired: true",
	}, &r)
}

// Runner.Close cancels the pending tasks first and only then waits for the
// default executor, as CPython 3.13's Runner.close does
// (asyncio/runners.py: "_cancel_all_tasks(loop)" then
// "loop.run_until_complete(loop.shutdown_default_executor(
// constants.THREAD_JOIN_TIMEOUT))"); runner.go:98 promises "it cancels
// every task still pending, runs the loop until they have all finished
// [...], shuts the default executor down". Here the only thing that lets
// an executor job return is the cleanup of a task that Close cancels: the
// other order would wait for the job for ever (300 s of real time). The
// job has finished, and its result was delivered, when Close returns.
func TestRunnerEdge_CloseCancelsTasksThenJoinsTheExecutor(t *testing.T) {
	var r eventLog
	release := make(chan struct{})
	jobDone := make(chan struct{})
	rn := NewRunner(WithVirtualTime())
	handlerLog(rn.Loop(), &r)
	var job *Future[int]
	_, err := RunWith(rn, func(tk *T) (int, error) {
		job = RunInExecutor(tk, func(context.Context) (int, error) {
			defer close(jobDone)
			<-release
			return 5, nil
		})
		startTask(tk, "releaser", func(tk *T) error {
			defer close(release)
			err := Sleep(tk, time.Hour)
			r.log("releaser: %s at %v", describe(err), tk.Loop().Time())
			return err
		})
		return 0, Sleep(tk, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-jobDone:
	default:
		t.Error("Close returned before the executor job finished")
	}
	v, jerr := job.Result()
	r.log("job: %d %v", v, jerr)
	checkEvents(t, []string{`releaser: CancelledError("") at 0s`, "job: 5 <nil>"}, &r)
}

// Inside a synctest bubble the executor join of Runner.Close runs on the
// bubble's clock: a job that only returns when its context is cancelled
// holds Close for exactly executorJoinTimeout (300 s, CPython's
// THREAD_JOIN_TIMEOUT) of bubble time, then Close warns and cancels the
// jobs' contexts (executor.go:311: "After executorJoinTimeout it gives up
// as CPython 3.12+ does (with a warning, leaving the jobs running), and
// first cancels the jobs' contexts"), and nothing is left in the bubble
// (synctest.Test fails a test whose bubble keeps goroutines).
func TestRunnerEdge_SynctestExecutorJoinTimeout(t *testing.T) {
	logs := captureSlog(t)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var jobErr error
		jobDone := make(chan struct{})
		v, err := Run(func(tk *T) (int, error) {
			_ = RunInExecutor(tk, func(ctx context.Context) (int, error) {
				defer close(jobDone)
				<-ctx.Done()
				jobErr = ctx.Err()
				return 0, ctx.Err()
			})
			return 1, nil
		})
		if v != 1 || err != nil {
			t.Errorf("Run = %d, %v", v, err)
		}
		if d := time.Since(start); d != executorJoinTimeout {
			t.Errorf("Run took %v of bubble time, want exactly %v", d, executorJoinTimeout)
		}
		<-jobDone
		if !errors.Is(jobErr, context.Canceled) {
			t.Errorf("the job's ctx: %v, want cancelled", jobErr)
		}
	})
	got := strings.Join(logs.take(), "\n")
	if !strings.Contains(got, "The executor did not finish joining its threads within 5m0s") {
		t.Errorf("slog = %q, want the join-timeout warning", got)
	}
}

// ---- loops inside synctest bubbles

// The same equal-deadline scenarios on a loop on the real clock inside a
// synctest bubble: README.md "The virtual clock or testing/synctest?":
// "a loop on the real clock runs on the bubble's fake time". The bubble's
// clock stands still while the loop runs, so deadlines computed at the
// same instant coincide as they do on virtual time, and the outcomes are
// CPython's (see TestRunnerEdge_EqualDeadlinesOnVirtualTime).
func TestRunnerEdge_SynctestEqualDeadlines(t *testing.T) {
	var r eventLog
	synctest.Test(t, func(t *testing.T) {
		if _, err := Run(func(tk *T) (struct{}, error) { return struct{}{}, equalDeadlines(tk, &r) }); err != nil {
			t.Fatal(err)
		}
	})
	checkEqualDeadlines(t, &r)
}

// A loop created outside a bubble and run inside one, or the other way
// round. Loop.Time is "monotonic, in time.Duration since the loop was
// created", and a bubble's clock is not the real one: such a loop's
// clock went back by decades and its CallLater(1s) saturated to Never (a
// Sleep there never returned). It is refused with an error that names the
// mistake, before main runs, and stays usable where it was created.
func TestRunnerEdge_SynctestLoopCreatedOutsideTheBubble(t *testing.T) {
	const msg = "the loop was created %s a testing/synctest bubble and cannot run %s one " +
		"(its clock would jump between the bubble's time and the real one): create the loop where it runs"
	refused := func(t *testing.T, r *Runner, created, runs string) {
		t.Helper()
		ran := false
		_, err := RunWith(r, func(tk *T) (int, error) { ran = true; return 0, nil })
		want := fmt.Sprintf(msg, created, runs)
		if ran || !errors.Is(err, ErrRuntime) || err.Error() != want {
			t.Errorf("RunWith: ran=%v err=%v, want main not run and the RuntimeError %s", ran, err, want)
		}
		if err := r.Loop().RunForever(); !errors.Is(err, ErrRuntime) || err.Error() != want {
			t.Errorf("RunForever = %v, want the RuntimeError %s", err, want)
		}
	}
	outside := NewRunner()
	outside.Loop() // a Runner creates its loop on first use
	synctest.Test(t, func(t *testing.T) { refused(t, outside, "outside", "inside") })
	// Outside the bubble again, the loop runs.
	if _, err := RunWith(outside, func(tk *T) (int, error) { return 0, Sleep(tk, time.Millisecond) }); err != nil {
		t.Errorf("RunWith outside the bubble: %v", err)
	}
	if err := outside.Close(); err != nil {
		t.Error(err)
	}

	var inside *Runner
	synctest.Test(t, func(t *testing.T) { inside = NewRunner(); inside.Loop() })
	refused(t, inside, "inside", "outside")
	if err := inside.Close(); err != nil {
		t.Error(err)
	}
}

// Several loops in one bubble, each on its own goroutine, on the one fake
// clock: each loop's time is the bubble time since it was created, they
// interleave in the order of their deadlines, and a task of one loop
// awaits a task of the other through Threadsafe inside a Go call (README:
// "asyncio.Threadsafe(aw) (callable from any goroutine)"). At the end
// nothing is left in the bubble.
func TestRunnerEdge_SynctestSeveralLoopsOneBubble(t *testing.T) {
	var r eventLog
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		handoff := make(chan *Task[int], 1)
		done := make(chan struct{})
		tick := func(name string, d time.Duration, n int) func(*T) error {
			return func(tk *T) error {
				for range n {
					if err := Sleep(tk, d); err != nil {
						return err
					}
					r.log("%s at %v, loop time %v", name, time.Since(start), tk.Loop().Time())
				}
				return nil
			}
		}
		go func() {
			defer close(done)
			_, err := Run(func(tk *T) (struct{}, error) {
				task := CreateTask(tk, func(tk *T) (int, error) { return 42, Sleep(tk, 2*time.Second) })
				//asynciovet:ignore blockingcall the channel has room for the one send: it never blocks
				handoff <- task
				if err := tick("A", time.Second, 3)(tk); err != nil {
					return struct{}{}, err
				}
				_, err := task.Await(tk)
				return struct{}{}, err
			})
			if err != nil {
				t.Errorf("loop A: %v", err)
			}
		}()
		_, err := Run(func(tk *T) (struct{}, error) {
			task, _, err := Recv(tk, handoff)
			if err != nil {
				return struct{}{}, err
			}
			waiter := startTask(tk, "waiter", func(tk *T) error {
				v, err := Go(tk, func(ctx context.Context) (int, error) {
					cf := Threadsafe[int](task)
					if err := cf.Wait(ctx); err != nil {
						return 0, err
					}
					return cf.Result()
				})
				r.log("B got %d %v at %v", v, err, time.Since(start))
				return err
			})
			err = tick("B", 1250*time.Millisecond, 2)(tk)
			awaitAll(tk, waiter)
			return struct{}{}, err
		})
		if err != nil {
			t.Errorf("loop B: %v", err)
		}
		<-done
	})
	checkEvents(t, []string{
		"A at 1s, loop time 1s",
		"B at 1.25s, loop time 1.25s",
		"A at 2s, loop time 2s",
		"B got 42 <nil> at 2s",
		"B at 2.5s, loop time 2.5s",
		"A at 3s, loop time 3s",
	}, &r)
}

// synctest.Wait with a loop running on another goroutine of the bubble:
// an idle loop (nothing ready, no timer, waiting for CallSoonThreadsafe)
// and a loop waiting for a timer are durably blocked, so Wait returns and
// the bubble's clock moves for them (README: "synctest: the bubble moves
// time for the loop and the goroutines alike").
func TestRunnerEdge_SynctestWaitWithARunningLoop(t *testing.T) {
	var r eventLog
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		rn := NewRunner()
		l := rn.Loop()
		fut := NewFuture[string](l)
		var waiting, slept atomic.Bool // bubble time is no happens-before edge for -race
		done := make(chan struct{})
		go func() {
			defer close(done)
			v, err := RunWith(rn, func(tk *T) (string, error) {
				waiting.Store(true)
				v, err := fut.Await(tk)
				if err != nil {
					return "", err
				}
				err = Sleep(tk, time.Hour)
				slept.Store(true)
				return v, err
			})
			r.log("run: %s %v at %v", v, err, time.Since(start))
			if err := rn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
		synctest.Wait() // the loop is idle, waiting for fut
		r.log("idle: waiting=%v at %v", waiting.Load(), time.Since(start))
		if _, err := l.CallSoonThreadsafe(func() { _ = fut.SetResult("v") }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the loop sleeps on its hour-long timer
		r.log("sleeping: slept=%v at %v", slept.Load(), time.Since(start))
		time.Sleep(30 * time.Minute)
		synctest.Wait()
		r.log("half way: slept=%v at %v", slept.Load(), time.Since(start))
		<-done
	})
	checkEvents(t, []string{
		"idle: waiting=true at 0s",
		"sleeping: slept=false at 0s",
		"half way: slept=false at 30m0s",
		"run: v <nil> at 1h0m0s",
	}, &r)
}

// A main that panics inside a bubble, with a child task parked on a
// channel receive and one on a Go call: Run returns the *PanicError
// (TestRUN5_MainErrorPropagates outside bubbles), Close cancels both
// children, whose helper goroutines end, so synctest.Test, which fails a
// bubble that keeps goroutines, ends cleanly.
func TestRunnerEdge_SynctestPanickingMainLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		var recvErr, goErr error
		_, err := Run(func(tk *T) (int, error) {
			startTask(tk, "recv", func(tk *T) error { _, _, recvErr = Recv(tk, ch); return recvErr })
			startTask(tk, "go", func(tk *T) error {
				_, goErr = Go(tk, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
				return goErr
			})
			if err := Sleep(tk, time.Minute); err != nil {
				return 0, err
			}
			panic("main panics")
		})
		var pe *PanicError
		if !errors.As(err, &pe) || pe.Value != "main panics" {
			t.Errorf("Run = %v, want the *PanicError", err)
		}
		if !IsCancelled(recvErr) || !IsCancelled(goErr) {
			t.Errorf("children: recv %v, go %v; want both cancelled by Close", recvErr, goErr)
		}
	})
}

// A loop on the real clock that is idle in a bubble (its task waits for a
// CallSoonThreadsafe an hour of bubble time away) must not keep a timer
// of its own ticking meanwhile. The loop is then durably blocked (README:
// "synctest: the bubble moves time for the loop and the goroutines
// alike"), and a bubble whose goroutines are all durably blocked with no
// timer is synctest's deadlock: "deadlock: all goroutines in bubble are
// blocked". Tried with the default watchdog: Run(main awaiting a future
// nobody completes) in a bubble never returns (go test -timeout 10s:
// "panic: test timed out", goroutine ids past 17,000,000, one per watchdog
// tick); with WithBlockedThreshold(0) synctest panics with its deadlock
// message at once. Here the hour of idleness is counted in watchdog looks.
func TestRunnerEdge_SynctestIdleLoopKeepsNoTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rn := NewRunner()
		defer rn.Close()
		l := rn.Loop()
		fut := NewFuture[int](l)
		go func() {
			time.Sleep(time.Hour)
			_, _ = l.CallSoonThreadsafe(func() { _ = fut.SetResult(1) })
		}()
		before := l.wd.looks.Load()
		v, err := RunWith(rn, func(tk *T) (int, error) { return fut.Await(tk) })
		if v != 1 || err != nil {
			t.Fatalf("RunWith = %d, %v", v, err)
		}
		if n := l.wd.looks.Load() - before; n > 10 {
			t.Errorf("the watchdog looked %d times during an hour the loop was idle (every %v of bubble time): "+
				"a loop waiting for ever in a bubble then never lets synctest report the deadlock, the bubble spins instead",
				n, watchdogPeriod(time.Duration(l.wd.threshold.Load())))
		}
	})
}

// The stall report on a virtual clock inside a bubble: README.md "Virtual
// time": "after WithOutsideGrace (10 s of real time by default) with
// nothing else to run, the exception handler gets a *StalledError", once
// per stall. In a bubble the grace is the bubble's time: the report comes
// 10 s after the loop started waiting for a Recv, once, and the loop's
// own clock has not moved when the value arrives an hour later.
func TestRunnerEdge_SynctestStallReportOnVirtualTime(t *testing.T) {
	var r eventLog
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ch := make(chan int)
		go func() { time.Sleep(time.Hour); ch <- 5 }()
		rn := NewRunner(WithVirtualTime())
		defer rn.Close()
		rn.Loop().SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
			r.log("handler at %v: stalled=%v", time.Since(start), errors.Is(c.Err, ErrStalled))
		})
		v, err := RunWith(rn, func(tk *T) (int, error) {
			v, _, err := Recv(tk, ch)
			return v, err
		})
		r.log("run: %d %v at %v, loop time %v", v, err, time.Since(start), rn.Loop().Time())
	})
	checkEvents(t, []string{
		"handler at 10s: stalled=true",
		"run: 5 <nil> at 1h0m0s, loop time 0s",
	}, &r)
}

// Sleep(t, Never) sleeps until cancelled, with no timer (asyncio.sleep
// of math.inf): on virtual time, with nothing else to do, the run reports
// ErrDeadlock at loop time 0 instead of jumping to Never and returning
// nil; cancelled, it returns the cancellation.
func TestRunnerEdge_SleepNeverOnVirtualTime(t *testing.T) {
	var at time.Duration
	_, err := Run(func(tk *T) (int, error) {
		defer func() { at = tk.Loop().Time() }()
		return 0, Sleep(tk, Never)
	}, WithVirtualTime())
	if !errors.Is(err, ErrDeadlock) || at != 0 {
		t.Errorf("Sleep(Never) alone: %v at loop time %v, want ErrDeadlock at 0", err, at)
	}
	_, err = Run(func(tk *T) (int, error) {
		sleeper := CreateTask(tk.Loop(), func(tk *T) (int, error) { return 0, Sleep(tk, Never) })
		tk.Loop().CallLater(time.Hour, func() { sleeper.Cancel("woken") })
		return sleeper.Await(tk)
	}, WithVirtualTime())
	var ce *CancelledError
	if !errors.As(err, &ce) || ce.Msg != "woken" {
		t.Errorf("Sleep(Never) cancelled after an hour: %v, want the CancelledError woken", err)
	}
}

// RunWith on a Runner whose loop the caller closed returns the
// RuntimeError Event loop is closed, as CPython 3.13's Runner.run raises it
// (`r = asyncio.Runner(); r.get_loop().close(); r.run(m())`), without
// running main; before, it panicked.
func TestRunnerEdge_RunWithOnAClosedLoop(t *testing.T) {
	rn := NewRunner(WithVirtualTime())
	if err := rn.Loop().Close(); err != nil {
		t.Fatal(err)
	}
	ran := false
	_, err := RunWith(rn, func(*T) (int, error) { ran = true; return 1, nil })
	if ran || !errors.Is(err, ErrRuntime) || !errors.Is(err, ErrLoopClosed) || err.Error() != "Event loop is closed" {
		t.Errorf("RunWith on a closed loop: ran=%v err=%v, want the RuntimeError Event loop is closed", ran, err)
	}
	if err := rn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
