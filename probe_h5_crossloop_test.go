package asyncio

import (
	"errors"
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
