package asyncio

// Edge cases of the fan-out toolkit found by a second hostile run
// (bounded.go, limiter.go, retry.go, hedge.go), after fanout_edges_test.go.
// Every test runs on the virtual clock.

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hedge and FirstSuccess: "A panic in an attempt is a bug, not a failure
// to race past: ... the result is the group's error holding the
// *PanicError". A loser that panics while it is being cancelled after
// another attempt won is such a bug too (a TaskGroup child panicking in
// its cleanup fails the group); the race dropped it and returned the
// winner's value.
func TestFanoutEdge2_LoserPanicAfterTheWinnerIsReported(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		v, err := Hedge(tk, HedgePolicy{MaxAttempts: 2, Delay: ms}, func(ct *T, i int) (string, error) {
			if i == 0 {
				//asynciovet:ignore droppedcancel the loser panics in its cleanup on purpose: the bug under test
				_ = Sleep(ct, time.Hour) // cancelled when attempt 1 wins
				panic("loser cleanup")
			}
			return "win", nil
		})
		if v != "" || !panickedWith(err, "loser cleanup") {
			t.Errorf("Hedge = %q, %s; want the group's error holding the *PanicError", v, describe(err))
		}
		v, err = FirstSuccess(tk,
			//asynciovet:ignore droppedcancel the loser panics in its cleanup on purpose: the bug under test
			func(ct *T) (string, error) { _ = Sleep(ct, time.Hour); panic("loser") },
			func(ct *T) (string, error) { return "w", Sleep(ct, ms) },
		)
		if v != "" || !panickedWith(err, "loser") {
			t.Errorf("FirstSuccess = %q, %s; want the group's error holding the *PanicError", v, describe(err))
		}
		// A loser that only fails (or returns its cancellation) after the
		// winner is still ignored.
		v, err = FirstSuccess(tk,
			//asynciovet:ignore droppedcancel the loser fails instead of returning its cancellation on purpose
			func(ct *T) (string, error) { _ = Sleep(ct, time.Hour); return "", errors.New("loser") },
			func(ct *T) (string, error) { return "w", Sleep(ct, ms) },
		)
		if v != "w" || err != nil {
			t.Errorf("FirstSuccess with a failing loser = %q, %s; want w", v, describe(err))
		}
		if n := len(AllTasks(tk)); n != 1 {
			t.Errorf("%d tasks left", n)
		}
		return nil
	})
}

// A Limiter used from a second loop, on its own goroutine, while its own
// loop uses it: the refusal (AcquireN's *RuntimeError) formatted the
// Limiter's String, which read the queue and refilled the bucket (Tokens)
// from the other goroutine — a data race on the owner's state (go test
// -race fails this test without the fix). The refusal must read nothing
// that changes.
func TestFanoutEdge2_LimiterRefusedOnAnotherLoopWithoutARace(t *testing.T) {
	lim := NewLimiter(1e6, 1)
	bound := make(chan struct{})
	var otherDone atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err := Run(func(tk *T) (struct{}, error) {
			for n := 0; n < 1_000_000 && !otherDone.Load(); n++ { // bounded: a hang guard
				if err := lim.Acquire(tk); err != nil {
					return struct{}{}, err
				}
				if n == 0 {
					close(bound)
				}
			}
			return struct{}{}, nil
		}, WithVirtualTime())
		if err != nil {
			t.Errorf("the owner loop: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		defer otherDone.Store(true)
		<-bound
		_, err := Run(func(tk *T) (struct{}, error) {
			for range 200 {
				err := lim.Acquire(tk)
				var re *RuntimeError
				if !errors.As(err, &re) || !containsWord(re.Msg, "bound to a different event loop") {
					return struct{}{}, fmt.Errorf("Acquire on the other loop = %v, want the *RuntimeError", err)
				}
			}
			return struct{}{}, nil
		}, WithVirtualTime())
		if err != nil {
			t.Errorf("the other loop: %v", err)
		}
	}()
	wg.Wait()
}

// TryAcquire from a loop other than the Limiter's: misuse is loud
// (DESIGN.md principle 4). It returned false, which reads as "no token
// now": a caller polling it waited for ever. It panics with the
// *RuntimeError AcquireN returns, changing nothing.
func TestFanoutEdge2_LimiterTryAcquireOnAnotherLoopPanics(t *testing.T) {
	lim := NewLimiter(1, 2)
	runVirtual(t, func(tk *T) error {
		if !lim.TryAcquire(tk, 1) {
			t.Error("TryAcquire on the first loop failed")
		}
		return nil
	})
	runVirtual(t, func(tk *T) error {
		v := mustPanic(t, "TryAcquire on another loop", func() { lim.TryAcquire(tk, 1) })
		var re *RuntimeError
		if err, _ := v.(error); !errors.As(err, &re) || !containsWord(re.Msg, "bound to a different event loop") {
			t.Errorf("TryAcquire on another loop panicked with %v, want the *RuntimeError", v)
		}
		if lim.TryAcquire(tk, 3) { // a bad weight is still just false
			t.Error("TryAcquire(3) of burst 2 succeeded")
		}
		return nil
	})
	if st := lim.Stats(); st.Granted != 1 {
		t.Errorf("stats %+v after the refusal, want 1 grant", st)
	}
}

// Weighted FIFO: a heavy waiter at the head blocks the lighter ones
// behind it; once it is cancelled they are served at once with the tokens
// already there, then at the refill's exact times. Nothing is lost.
func TestFanoutEdge2_LimiterHeavyHeadCancelled(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 5)
		if err := lim.AcquireN(tk, 4); err != nil {
			return err
		}
		heavy := startTask(tk, "heavy", func(tk *T) error { err := lim.AcquireN(tk, 5); r.log("heavy %v", err); return err })
		tasks := []*Task[struct{}]{heavy}
		for i := range 3 {
			tasks = append(tasks, startTask(tk, "light", func(tk *T) error {
				err := lim.AcquireN(tk, 1)
				r.log("light%d %v", i, err)
				return err
			}))
		}
		if err := Sleep(tk, 5*ms); err != nil { // 1.05 tokens: enough for a light one
			return err
		}
		r.log("waiters %d", lim.Waiters())
		heavy.Cancel()
		awaitAll(tk, tasks...)
		st := lim.Stats()
		r.log("granted=%d waited=%d wakeups=%d tokens=%.2f", st.Granted, st.Waited, st.Wakeups, lim.Tokens())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"5ms waiters 4",
		"5ms heavy asyncio: cancelled",
		"5ms light0 <nil>",
		"100ms light1 <nil>",
		"200ms light2 <nil>",
		"200ms granted=4 waited=4 wakeups=3 tokens=0.00",
	}, r)
}

// Retry in a TaskGroup whose sibling fails during the backoff: the
// cancellation arrives at once, is not retried, and the group reports the
// sibling's error only; the parent's cancel count is back to 0.
func TestFanoutEdge2_RetryInATaskGroupWithAFailingSibling(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		attempts := 0
		var rerr error
		var at time.Duration
		err := TaskGroup(tk, func(g *Group) error {
			if _, err := Spawn(g, func(ct *T) (int, error) {
				v, err := Retry(ct, RetryPolicy{MaxAttempts: 10, Initial: time.Second, Rand: RandFunc(func() float64 { return 0.99 })},
					func(*T, Attempt) (int, error) { attempts++; return 0, errors.New("boom") })
				rerr, at = err, ct.Loop().Time()
				return v, err
			}); err != nil {
				return err
			}
			_, err := Spawn(g, func(ct *T) (int, error) {
				if err := Sleep(ct, 5*ms); err != nil {
					return 0, err
				}
				return 0, errors.New("sibling")
			})
			return err
		})
		if got := describe(err); got != `ExceptionGroup("unhandled errors in a TaskGroup", [*errors.errorString("sibling")])` {
			t.Errorf("group: %s", got)
		}
		if !IsCancelled(rerr) || attempts != 1 || at != 5*ms || tk.Cancelling() != 0 {
			t.Errorf("Retry: %s after %d attempts at %v; parent cancelling %d", describe(rerr), attempts, at, tk.Cancelling())
		}
		return nil
	})
}

// A Retryable classifier that panics: the panic is the task's, as any
// panic in user code (a *PanicError), after the one attempt; no sleep.
func TestFanoutEdge2_RetryClassifierPanics(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		attempts := 0
		task := CreateTask(tk, func(ct *T) (int, error) {
			return Retry(ct, RetryPolicy{MaxAttempts: 3, Retryable: func(error) bool { panic("classifier") }},
				func(*T, Attempt) (int, error) { attempts++; return 0, errors.New("x") })
		})
		_, err := task.Await(tk)
		if !panickedWith(err, "classifier") || attempts != 1 || tk.Loop().Time() != 0 {
			t.Errorf("Retry: %s after %d attempts at %v", describe(err), attempts, tk.Loop().Time())
		}
		return nil
	})
}

// Hedge: the winner's success and a loser's failure in the same
// iteration, in both orders: the winner's value, nothing reported.
func TestFanoutEdge2_HedgeWinnerAndLoserFailureInOneIteration(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		for winner := range 2 {
			v, err := Hedge(tk, HedgePolicy{MaxAttempts: 2, Delay: ms}, func(ct *T, i int) (string, error) {
				if err := Sleep(ct, time.Duration(2-i)*ms); err != nil { // both end at 2ms
					return "", err
				}
				if i == winner {
					return fmt.Sprint("win", i), nil
				}
				return "", fmt.Errorf("fail%d", i)
			})
			if v != fmt.Sprint("win", winner) || err != nil {
				t.Errorf("winner %d: Hedge = %q, %s", winner, v, describe(err))
			}
		}
		if n := len(AllTasks(tk)); n != 1 || tk.Loop().Time() != 4*ms {
			t.Errorf("%d tasks left at %v", n, tk.Loop().Time())
		}
		return nil
	})
}

// Hedge whose every attempt panics: the first panic stops the race (no
// further attempt starts), the result is the group's error holding it.
// FirstSuccess with no function is a *ValueError, returned.
func TestFanoutEdge2_HedgeEveryAttemptPanicsAndFirstSuccessOfNothing(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		n := 0
		v, err := Hedge(tk, HedgePolicy{MaxAttempts: 3, Delay: ms}, func(_ *T, i int) (string, error) {
			n++
			panic(fmt.Sprint("p", i))
		})
		var eg *ExceptionGroup
		if v != "" || !panickedWith(err, "p0") || !errors.As(err, &eg) || eg.Msg == hedgeErrorMessage || n != 1 {
			t.Errorf("Hedge = %q, %s after %d attempts", v, describe(err), n)
		}
		_, err = FirstSuccess[string](tk)
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Errorf("FirstSuccess() = %s, want a *ValueError", describe(err))
		}
		return nil
	})
}

// A BoundedTaskGroup whose body fails while children are queued: the
// running ones are cancelled, the queued ones never start, every slot is
// free, and the error is TaskGroup's for the same body.
func TestFanoutEdge2_BoundedBodyFailsWithQueuedChildren(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var started, ended []string
		var bg *BoundedGroup
		err := BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			bg = g
			for i := range 5 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error {
					started = append(started, fmt.Sprint(i))
					err := Sleep(ct, time.Hour)
					ended = append(ended, fmt.Sprint(i, " ", describe(err)))
					return err
				}); err != nil {
					return err
				}
			}
			if err := Sleep(tk, ms); err != nil {
				return err
			}
			return errors.New("body")
		})
		ref := TaskGroup(tk, func(g *Group) error {
			if _, err := Spawn(g, func(ct *T) (int, error) { return 0, Sleep(ct, time.Hour) }); err != nil {
				return err
			}
			if err := Sleep(tk, ms); err != nil {
				return err
			}
			return errors.New("body")
		})
		if describe(err) != describe(ref) {
			t.Errorf("bounded group: %s; TaskGroup: %s", describe(err), describe(ref))
		}
		checkLines(t, []string{"0", "1"}, started)
		checkLines(t, []string{`0 CancelledError("")`, `1 CancelledError("")`}, ended)
		if bg.Free() != 2 || bg.Queued() != 0 || bg.Running() != 0 || len(AllTasks(tk)) != 1 {
			t.Errorf("after: free %d queued %d running %d tasks %d", bg.Free(), bg.Queued(), bg.Running(), len(AllTasks(tk)))
		}
		return nil
	})
}

// Nested bounded groups: 2 outer children at a time, each running an
// inner group of 3 at a time: at most 6 leaves at once, exact timing.
func TestFanoutEdge2_NestedBoundedGroups(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		cur, peak, outerCur, outerPeak := 0, 0, 0, 0
		err := BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			for range 4 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error {
					outerCur++
					outerPeak = max(outerPeak, outerCur)
					defer func() { outerCur-- }()
					return BoundedTaskGroup(ct, 3, func(ig *BoundedGroup) error {
						for range 5 {
							if _, err := SpawnBoundedErr(ig, func(it *T) error {
								cur++
								peak = max(peak, cur)
								defer func() { cur-- }()
								return Sleep(it, ms)
							}); err != nil {
								return err
							}
						}
						return nil
					})
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || peak != 6 || outerPeak != 2 || tk.Loop().Time() != 4*ms {
			t.Errorf("nested: %v, peak %d leaves and %d outer children, ended at %v", err, peak, outerPeak, tk.Loop().Time())
		}
		return nil
	})
}

// GatherBoundedOutcomes (return_exceptions=True) cancelled from outside
// mid-flight: the running children are cancelled and awaited, the queued
// ones never start, the error is the caller's cancellation.
func TestFanoutEdge2_GatherBoundedOutcomesCancelledMidFlight(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		started, ended := 0, 0
		child := func(ct *T) (int, error) {
			started++
			err := Sleep(ct, time.Hour)
			ended++
			return 0, err
		}
		inner := CreateTask(tk, func(it *T) ([]Outcome[int], error) {
			return GatherBoundedOutcomes(it, 2, child, child, child, child)
		})
		if err := Sleep(tk, ms); err != nil {
			return err
		}
		inner.Cancel("outer")
		out, err := inner.Await(tk)
		if out != nil || describe(err) != `CancelledError("outer")` || started != 2 || ended != 2 || len(AllTasks(tk)) != 1 {
			t.Errorf("GatherBoundedOutcomes = %v, %s; started %d ended %d tasks %d", out, describe(err), started, ended, len(AllTasks(tk)))
		}
		return nil
	})
}

// AsCompletedBounded abandoned at its first outcome: every child started
// (the one a freed slot started in the same iteration too) is cancelled
// and awaited before the loop statement ends; the others never start.
func TestFanoutEdge2_AsCompletedBoundedBreakAtTheFirst(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		started, ended := 0, 0
		var fns []func(*T) (int, error)
		for i := range 6 {
			fns = append(fns, func(ct *T) (int, error) {
				started++
				err := Sleep(ct, time.Duration(i+1)*ms)
				ended++
				return i, err
			})
		}
		for i, o := range AsCompletedBounded(tk, 3, fns...) {
			if i != 0 || o.Err != nil {
				t.Errorf("first outcome %d %+v", i, o)
			}
			break
		}
		if started != 4 || ended != 4 || len(AllTasks(tk)) != 1 || tk.Loop().Time() != ms {
			t.Errorf("after the break: started %d ended %d tasks %d at %v", started, ended, len(AllTasks(tk)), tk.Loop().Time())
		}
		return nil
	})
}
