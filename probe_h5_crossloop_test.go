package asyncio

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// Probes of cross-loop calls (h5): outcomes racing with the target's
// Close, cancellation racing with the outcome, misuse.

// A remote task that finished before its loop closed, but whose done
// callback (which sends the outcome back) was still in the loop's ready
// queue when the loop stopped: the call finished, its effect happened, so
// the caller must get its outcome, not an error saying the target closed
// "before the call finished".
func TestH5_OutcomeOfATaskDoneBeforeItsLoopClosedIsNotReportedAsUndone(t *testing.T) {
	for _, outcome := range []string{"value", "error"} {
		t.Run(outcome, func(t *testing.T) {
			b := NewLoop()
			bDone := make(chan error, 1)
			go func() { bDone <- b.RunForever() }()
			closed := make(chan error, 1)
			boom := errors.New("remote failure")
			_, err := Run(func(tk *T) (struct{}, error) {
				effect := false
				v, err := CallOn(tk, b, func(rt *T) (int, error) {
					// The task's last step: the loop stops after this
					// iteration, before the done callbacks run.
					b.Stop()
					effect = true
					// b is closed from outside once it stopped, while
					// this call is still waiting for its outcome.
					go func() {
						<-bDone
						closed <- b.Close()
					}()
					if outcome == "error" {
						return 0, boom
					}
					return 7, nil
				})
				if !effect {
					t.Fatal("the remote function did not run")
				}
				switch outcome {
				case "value":
					if err != nil || v != 7 {
						t.Errorf("CallOn of a task done before its loop closed: %v, %v; want 7, nil", v, err)
					}
				case "error":
					if !errors.Is(err, boom) || errors.Is(err, ErrLoopClosed) {
						t.Errorf("CallOn of a task failed before its loop closed: %v; want the remote error", err)
					}
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-closed; err != nil {
				t.Errorf("b.Close: %v", err)
			}
		})
	}
}

// CallFuncOn's three interleavings of a cancellation with its function
// and outcome, each forced by explicit signals: cancelled before fn ran
// (fn never runs), after fn ran but before the result is back (the result
// is dropped, the cancellation returned), and after the result is back
// but before the task resumed (the result returned, the cancellation kept
// for the next await). The outside work on the caller's loop is released
// every time.
func TestH5_CallFuncOnCancellationInterleavings(t *testing.T) {
	err := twoLoops(t, func(tk *T, b *Loop) error {
		a := tk.Loop()
		var runs atomic.Int32
		fn := func() (int, error) { runs.Add(1); return 7, nil }

		// 1. Before fn ran: b is blocked while the cancellation lands.
		hold := make(chan struct{})
		//asynciovet:ignore blockingcall blocking b is the point: the call must wait behind it
		if _, err := b.CallSoonThreadsafe(func() { <-hold }); err != nil {
			return err
		}
		caller := CreateTask(tk, func(ct *T) (int, error) { return CallFuncOn(ct, b, fn) })
		if err := Sleep(tk, 0); err != nil { // the caller submits and waits
			return err
		}
		caller.Cancel("before")
		_, err := caller.Await(tk)
		close(hold)
		if _, ferr := CallFuncOn(tk, b, func() (int, error) { return 0, nil }); ferr != nil { // b ran what was queued
			return ferr
		}
		if describe(err) != `CancelledError("before")` || runs.Load() != 0 {
			t.Errorf("cancelled before fn ran: %s, fn ran %d times; want the cancellation and no run", describe(err), runs.Load())
		}

		// 2. fn ran, the result is on its way: the cancellation reaches
		// a before the result does.
		var caller2 *Task[int]
		caller2 = CreateTask(tk, func(ct *T) (int, error) {
			return CallFuncOn(ct, b, func() (int, error) {
				runs.Add(1)
				_, _ = a.CallSoonThreadsafe(func() { caller2.Cancel("mid") })
				return 8, nil
			})
		})
		v, err := caller2.Await(tk)
		if describe(err) != `CancelledError("mid")` || runs.Load() != 1 || v != 0 {
			t.Errorf("cancelled with the result on its way: %d, %s; want the cancellation (the result is dropped)", v, describe(err))
		}

		// 3. The result is back before the caller resumed: it gets it,
		// and the cancellation at its next await.
		got := 0
		caller3 := CreateTask(tk, func(ct *T) (int, error) {
			v, err := CallFuncOn(ct, b, func() (int, error) { runs.Add(1); return 9, nil })
			got = v
			if err != nil {
				return 0, err
			}
			return v, Sleep(ct, 0)
		})
		if err := Sleep(tk, 0); err != nil { // caller3 submits and waits
			return err
		}
		w := caller3.t.futWaiter
		if w == nil {
			t.Fatal("caller3 is not waiting for its call")
		}
		// A done callback of the awaited future runs before the task's
		// wakeup: the cancellation lands with the result already back.
		w.addDoneCallback(func() { caller3.Cancel("late") })
		_, err = caller3.Await(tk)
		if got != 9 || describe(err) != `CancelledError("late")` {
			t.Errorf("cancelled with the result back: the await returned %d, then %s; want 9, then the cancellation", got, describe(err))
		}
		if n := a.external.Load(); n != 0 {
			t.Errorf("outside work left on the caller's loop: %d", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A chain of calls, loop 0 to loop 1 to loop 2: cancelling the task on
// loop 0 cancels the task on loop 1 and, through its own call, the task
// on loop 2, each with the same message; every loop's outside work is
// released and nothing is left listed.
func TestH5_CancellationRunsDownAChainOfCalls(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	defer g.Close()
	msgs := NewCrossQueue[string](2)
	report := func(where string, err error) {
		var ce *CancelledError
		if errors.As(err, &ce) {
			_ = msgs.PutNowait(where + ce.Msg)
		}
	}
	got := map[string]bool{}
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		up, signal := started(tk)
		caller := CreateTask(tk, func(ct *T) (int, error) {
			return CallOn(ct, g.Loop(1), func(t1 *T) (int, error) {
				v, err := CallOn(t1, g.Loop(2), func(t2 *T) (int, error) {
					signal()
					_, err := NewFuture[int](t2).Await(t2)
					report("loop 2: ", err)
					return 0, err
				})
				report("loop 1: ", err)
				return v, err
			})
		})
		if _, err := up.Await(tk); err != nil {
			return struct{}{}, err
		}
		caller.Cancel("stop the chain")
		if _, err := caller.Await(tk); describe(err) != `CancelledError("stop the chain")` {
			t.Errorf("the caller: %s", describe(err))
		}
		// Each cancelled call returns at once, so loop 1's task may
		// report before loop 2's has heard of the cancellation: in any
		// order.
		for range 2 {
			m, err := msgs.Get(tk)
			if err != nil {
				return struct{}{}, err
			}
			got[m] = true
		}
		// Let both loops finish what the cancellations queued.
		for _, i := range []int{1, 2} {
			if _, err := CallFuncOn(tk, g.Loop(i), func() (int, error) { return 0, nil }); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got["loop 1: stop the chain"] || !got["loop 2: stop the chain"] {
		t.Errorf("remote cancellations: %v; want loop 1's and loop 2's, each with the caller's message", got)
	}
	for i, l := range g.Loops() {
		if n := l.external.Load(); n != 0 {
			t.Errorf("loop %d: outside work %d left", i, n)
		}
		if n := crossCallsListed(l); n != 0 {
			t.Errorf("loop %d: %d calls still listed", i, n)
		}
	}
}

// The refusals the basic misuse test does not cover: a closed calling
// loop (the error wraps ErrLoopClosed and names the caller's side),
// CallFuncOn to the caller's own loop, and CallFuncOn from a plain
// goroutine; none of them registers anything on the target or counts
// outside work on the caller.
func TestH5_MoreRefusedCallsChangeNothing(t *testing.T) {
	a, b := NewLoop(), NewLoop()
	mustClose(t, a)
	_, err := SubmitTo(a, b, func(*T) (int, error) { return 1, nil })
	if !errors.Is(err, ErrLoopClosed) || !strings.Contains(err.Error(), "calling loop is closed") {
		t.Errorf("SubmitTo from a closed loop: %v", err)
	}
	//asynciovet:ignore blockingcall a test-only mutex held for a few instructions, never across an await
	b.threadsafeMu.Lock()
	tracked := len(b.threadsafeFutures)
	b.threadsafeMu.Unlock()
	if tracked != 0 || len(a.grp.targets) != 0 {
		t.Errorf("a refused call registered something: %d on the target, %d targets on the caller", tracked, len(a.grp.targets))
	}
	mustClose(t, b)

	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	_, err = RunGroup(g, func(tk *T) (struct{}, error) {
		ran := false
		_, err := CallFuncOn(tk, tk.Loop(), func() (int, error) { ran = true; return 0, nil })
		if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "own loop") || ran {
			t.Errorf("CallFuncOn to its own loop: %v (fn ran %v)", err, ran)
		}
		var ferr error
		fromForeignGoroutine(func() {
			_, ferr = CallFuncOn(tk, g.Loop(1), func() (int, error) { ran = true; return 0, nil })
		})
		if !errors.Is(ferr, ErrRuntime) || !strings.Contains(ferr.Error(), "not the running task") || ran {
			t.Errorf("CallFuncOn from a plain goroutine: %v (fn ran %v)", ferr, ran)
		}
		if n := tk.Loop().external.Load(); n != 0 || crossCallsListed(tk.Loop()) != 0 {
			t.Errorf("outside work %d, calls listed %d after refused calls", n, crossCallsListed(tk.Loop()))
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
