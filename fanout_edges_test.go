package asyncio

// Edge cases of the fan-out toolkit, found by a hostile run (bounded.go, limiter.go, retry.go,
// hedge.go). Every test runs on the virtual clock.

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// panickedWith reports whether err carries a *PanicError with value v.
func panickedWith(err error, v any) bool {
	var pe *PanicError
	return errors.As(err, &pe) && pe.Value == v
}

// GatherBoundedOutcomes promises that "every child runs to its end ...
// and its value or error is returned in argument order; the error is only
// t's cancellation". A panicking child is a failure (a *PanicError, as
// GatherBounded returns it): it must be an outcome and must not stop the
// other children.
func TestFanoutEdge_GatherBoundedOutcomesPanicIsAnOutcome(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		out, err := GatherBoundedOutcomes(tk, 2,
			func(*T) (int, error) { panic("boom") },
			func(ct *T) (int, error) { return 2, Sleep(ct, 10*ms) },
		)
		if err != nil {
			t.Errorf("GatherBoundedOutcomes returned the error %s; want nil (the only error is t's cancellation)", describe(err))
			return nil
		}
		if !panickedWith(out[0].Err, "boom") {
			t.Errorf("out[0] = %+v, want a *PanicError(boom)", out[0])
		}
		if out[1].Value != 2 || out[1].Err != nil {
			t.Errorf("out[1] = %+v, want 2 (the other child runs to its end)", out[1])
		}
		return nil
	})
}

// AsCompletedBounded: "A failure is yielded, not raised, and does not stop
// the others". A panicking child must be yielded as a *PanicError, and the
// other child must still complete.
func TestFanoutEdge_AsCompletedBoundedPanicIsYielded(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var got []string
		for i, o := range AsCompletedBounded(tk, 2,
			func(*T) (int, error) { panic("boom") },
			func(ct *T) (int, error) { return 2, Sleep(ct, 10*ms) },
		) {
			switch {
			case i == 0 && panickedWith(o.Err, "boom"):
				got = append(got, "0 panic")
			default:
				got = append(got, fmt.Sprintf("%d %v %s", i, o.Value, describe(o.Err)))
			}
		}
		checkLines(t, []string{"0 panic", "1 2 <nil>"}, got)
		return nil
	})
}

// A panic in the body of the range loop over AsCompletedBounded goes on
// with its original value, after the children still running were
// cancelled and awaited (TaskGroup's panic rule).
func TestFanoutEdge_AsCompletedBoundedPanicInLoopBody(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var childErr error
		v := mustPanic(t, "loop body", func() {
			for range AsCompletedBounded(tk, 2,
				func(ct *T) (int, error) { return 1, nil },
				func(ct *T) (int, error) { err := Sleep(ct, time.Hour); childErr = err; return 0, err },
			) {
				panic("body")
			}
		})
		if v != "body" {
			t.Errorf("panic value %v, want body", v)
		}
		if !IsCancelled(childErr) || len(AllTasks(tk)) != 1 {
			t.Errorf("the running child: %s; tasks left %d", describe(childErr), len(AllTasks(tk)))
		}
		return nil
	})
}

// HedgePolicy.MaxAttempts is "the most attempts started"; any value >= 0
// passes validation. A huge bound ("hedge until one succeeds") must not
// crash when the first attempt succeeds at once: race preallocates one
// error slot per possible attempt (make([]error, n)).
func TestFanoutEdge_HedgeHugeMaxAttempts(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var v string
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Hedge with MaxAttempts=MaxInt panicked: %v", r)
				}
			}()
			v, err = Hedge(tk, HedgePolicy{MaxAttempts: math.MaxInt, Delay: time.Second},
				func(*T, int) (string, error) { return "ok", nil })
		}()
		if err != nil || v != "ok" {
			t.Errorf("Hedge = %q, %v; want ok", v, err)
		}
		return nil
	})
}

// FirstSuccess: a panicking attempt is a bug, not a failure to race past
// (hedge.go): it stops the sibling that would have succeeded, as a
// TaskGroup child's panic does, and the result holds the *PanicError.
func TestFanoutEdge_FirstSuccessPanickingAttempt(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		sibling := ""
		v, err := FirstSuccess(tk,
			func(*T) (string, error) { panic("boom") },
			func(ct *T) (string, error) {
				err := Sleep(ct, 10*ms)
				sibling = describe(err)
				return "r1", err
			},
		)
		var eg *ExceptionGroup
		if v != "" || !panickedWith(err, "boom") || !errors.As(err, &eg) || eg.Msg == hedgeErrorMessage {
			t.Errorf("FirstSuccess = %q, %s; want TaskGroup's group holding the *PanicError", v, describe(err))
		}
		if !strings.HasPrefix(sibling, "CancelledError") {
			t.Errorf("the sibling's sleep returned %s, want a cancellation", sibling)
		}
		return nil
	})
}

// Queued: "the number of children waiting for a slot (cancelled ones that
// have not ended yet included)". A queued child that was cancelled and has
// ended no longer waits: it must not be counted.
func TestFanoutEdge_BoundedQueuedDoesNotCountEndedChildren(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		return BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			var tasks []*Task[struct{}]
			for range 3 {
				task, err := SpawnBoundedErr(g, func(ct *T) error { return Sleep(ct, 10*ms) })
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			tasks[1].Cancel()
			if _, err := tasks[1].Await(tk); !IsCancelled(err) {
				t.Errorf("the cancelled queued child: %s", describe(err))
			}
			if q := g.Queued(); q != 1 {
				t.Errorf("Queued() = %d with one child waiting and one cancelled child ended, want 1", q)
			}
			return nil
		})
	})
}

// BoundedGroup.Cancel from inside a running child: the queued children
// never start, the group ends without an error, every slot is free.
func TestFanoutEdge_BoundedCancelFromAChild(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var bg *BoundedGroup
		started := 0
		err := BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			bg = g
			for i := range 4 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error {
					started++
					if i == 0 {
						g.Cancel()
						return Sleep(ct, 0) // the cancellation arrives here
					}
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || started != 1 || bg.Free() != 1 || bg.Running() != 0 {
			t.Errorf("group: %v, started %d, free %d, running %d", err, started, bg.Free(), bg.Running())
		}
		return nil
	})
}

// A panic in a bounded child is contained: the group fails with an
// ExceptionGroup holding the *PanicError, the queued children never start,
// the slot is given back.
func TestFanoutEdge_BoundedPanicInAChild(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var bg *BoundedGroup
		started := 0
		err := BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			bg = g
			for i := range 3 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error {
					started++
					if i == 0 {
						panic("child")
					}
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		var eg *ExceptionGroup
		if !errors.As(err, &eg) || !panickedWith(err, "child") || started != 1 || bg.Free() != 1 {
			t.Errorf("group: %s, started %d, free %d", describe(err), started, bg.Free())
		}
		return nil
	})
}

// WithEagerStart is ignored for a queued child: it must not run before a
// slot frees, even on a loop with eager tasks.
func TestFanoutEdge_BoundedEagerQueuedChildWaits(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithEagerTasks())
	r := &eventLog{clock: l}
	main := CreateTask(l, func(tk *T) (struct{}, error) {
		return struct{}{}, BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			for i := range 3 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error {
					r.log("c%d start running=%d", i, g.Running())
					return Sleep(ct, 10*ms)
				}, WithEagerStart()); err != nil {
					return err
				}
			}
			r.log("spawned")
			return nil
		})
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	checkEvents(t, []string{"0s c0 start running=1", "0s spawned", "10ms c1 start running=1", "20ms c2 start running=1"}, r)
}

// GatherBounded cancelled from outside with a message: the children are
// cancelled and awaited, the *CancelledError is t's own (its message).
func TestFanoutEdge_GatherBoundedOutsideCancelKeepsTheMessage(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ended := 0
		child := func(ct *T) (int, error) {
			err := Sleep(ct, time.Hour)
			ended++
			return 0, err
		}
		inner := CreateTask(tk, func(it *T) ([]int, error) { return GatherBounded(it, 2, child, child, child) })
		if err := Sleep(tk, ms); err != nil {
			return err
		}
		inner.Cancel("outer")
		_, err := inner.Await(tk)
		if describe(err) != `CancelledError("outer")` || ended != 2 {
			t.Errorf("GatherBounded: %s, %d running children ended (want 2: the queued one never started)", describe(err), ended)
		}
		return nil
	})
}

// Retry inside a Timeout: the attempt running at the deadline is
// cancelled, and that cancellation is not retried; the Timeout reports
// its TimeoutError. The attempts before it were retried.
func TestFanoutEdge_RetryAttemptCancelledByAnEnclosingTimeout(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		attempts := 0
		boom := errors.New("boom")
		err := Timeout(tk, 250*ms, func(*TimeoutScope) error {
			_, err := Retry(tk, RetryPolicy{MaxAttempts: 100, Initial: time.Nanosecond, Rand: RandFunc(func() float64 { return 0 })},
				func(at *T, a Attempt) (int, error) {
					attempts++
					if err := Sleep(at, 100*ms); err != nil {
						return 0, err
					}
					return 0, boom
				})
			return err
		})
		if !errors.Is(err, ErrTimeout) || attempts != 3 || tk.Loop().Time() != 250*ms {
			t.Errorf("Retry under Timeout: %s after %d attempts at %v; want a TimeoutError after 3 at 250ms", describe(err), attempts, tk.Loop().Time())
		}
		return nil
	})
}

// Retry with a deadline already passed (an expiring Timeout): no second
// attempt, a *RetryError "enclosing timeout" at once, no sleep.
func TestFanoutEdge_RetryWithAPastDeadlineDoesNotSleep(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		boom := errors.New("boom")
		attempts := 0
		var rerr error
		terr := TimeoutAt(tk, -time.Hour, func(*TimeoutScope) error {
			_, rerr = Retry(tk, RetryPolicy{MaxAttempts: 5, Initial: time.Nanosecond}, func(*T, Attempt) (int, error) {
				attempts++
				return 0, boom
			})
			return nil
		})
		if terr != nil && !errors.Is(terr, ErrTimeout) {
			return terr
		}
		var re *RetryError
		if !errors.As(rerr, &re) || re.Reason != "enclosing timeout" || attempts != 1 || tk.Loop().Time() != 0 {
			t.Errorf("Retry: %v after %d attempts at %v", rerr, attempts, tk.Loop().Time())
		}
		return nil
	})
}

// AcquireN with a bad weight changes nothing: the limiter is not bound to
// the caller's loop, so another loop can still use it.
func TestFanoutEdge_LimiterBadWeightDoesNotBind(t *testing.T) {
	lim := NewLimiter(1, 2)
	runVirtual(t, func(tk *T) error {
		if err := lim.AcquireN(tk, 3); err == nil {
			t.Error("AcquireN(3) of burst 2 succeeded")
		}
		if lim.TryAcquire(tk, 0) {
			t.Error("TryAcquire(0) succeeded")
		}
		return nil
	})
	runVirtual(t, func(tk *T) error {
		if err := lim.Acquire(tk); err != nil {
			t.Errorf("the limiter was bound by a refused call: %v", err)
		}
		return nil
	})
}

// A waiter cancelled in the same iteration as, but before, the timer that
// grants its tokens: FIFO holds (the next waiter is served at once with
// the tokens the cancelled one gave back), nothing is lost, and the
// counters stay consistent (Wakeups: "exactly one per acquisition granted
// to a waiter").
func TestFanoutEdge_LimiterWaiterCancelledJustBeforeItsTimer(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 1)
		if err := lim.Acquire(tk); err != nil {
			return err
		}
		var a *Task[struct{}]
		// Armed before a waits, so it runs before the limiter's timer at
		// the same moment: a is cancelled, its future is cancelled, but a
		// has not resumed (it is still first in the queue) when the timer
		// fires.
		tk.Loop().CallAt(100*ms, func() { a.Cancel() })
		a = startTask(tk, "a", func(tk *T) error {
			err := lim.Acquire(tk)
			r.log("a: %v", err)
			return err
		})
		b := startTask(tk, "b", func(tk *T) error {
			if err := lim.Acquire(tk); err != nil {
				return err
			}
			r.log("b admitted")
			return nil
		})
		awaitAll(tk, a, b)
		st := lim.Stats()
		r.log("granted=%d waited=%d tokens=%.1f", st.Granted, st.Waited, lim.Tokens())
		r.log("wakeups=%d refunded=%d", st.Wakeups, st.Refunded)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"100ms a: asyncio: cancelled",
		"100ms b admitted",
		"100ms granted=2 waited=2 tokens=0.0",
		"100ms wakeups=1 refunded=0", // one wakeup per grant: none for the cancelled waiter
	}, r)
}

// Hedge on a loop with eager tasks: an attempt that fails during Spawn
// (before the body waits) still starts the next one at once; one that
// succeeds during Spawn wins and no further attempt starts.
func TestFanoutEdge_HedgeWithEagerAttempts(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithEagerTasks())
	var starts []int
	main := CreateTask(l, func(tk *T) (string, error) {
		return Hedge(tk, HedgePolicy{MaxAttempts: 5, Delay: time.Hour}, func(_ *T, i int) (string, error) {
			starts = append(starts, i)
			if i < 2 {
				return "", fmt.Errorf("fail %d", i)
			}
			return fmt.Sprint("r", i), nil
		})
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	v, err := main.Result()
	mustClose(t, l)
	if v != "r2" || err != nil || fmt.Sprint(starts) != "[0 1 2]" || l.Time() != 0 {
		t.Errorf("Hedge = %q, %v; attempts %v at %v", v, err, starts, l.Time())
	}
}

// FirstSuccess cancelled at every suspension point of the caller: it
// always returns the *CancelledError (or the value when the cancellation
// comes after the winner was decided and is re-armed) and no attempt is
// left behind.
func TestFanoutEdge_FirstSuccessCancelledAtEveryStep(t *testing.T) {
	for k := 0; k < 8; k++ {
		runVirtual(t, func(tk *T) error {
			fs := CreateTask(tk, func(ft *T) (string, error) {
				return FirstSuccess(ft,
					func(ct *T) (string, error) { return "a", Sleep(ct, 3*ms) },
					func(ct *T) (string, error) { return "", errors.Join(errors.New("b"), Sleep(ct, ms)) },
				)
			})
			for range k {
				if err := Sleep(tk, ms); err != nil {
					return err
				}
			}
			fs.Cancel("stop")
			v, err := fs.Await(tk)
			if err != nil && !IsCancelled(err) || err == nil && v != "a" {
				t.Errorf("k=%d: FirstSuccess = %q, %s", k, v, describe(err))
			}
			if n := len(AllTasks(tk)); n != 1 {
				t.Errorf("k=%d: %d tasks left", k, n)
			}
			return nil
		})
	}
}

// Retry never retries a cancellation, even one wrapped by the attempt
// (fmt.Errorf %w): it is returned at once.
func TestFanoutEdge_RetryWrappedCancellationNotRetried(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		attempts := 0
		rt := CreateTask(tk, func(rt *T) (int, error) {
			return Retry(rt, RetryPolicy{MaxAttempts: 10, Retryable: func(error) bool { return true }}, func(at *T, _ Attempt) (int, error) {
				attempts++
				if err := Sleep(at, time.Hour); err != nil {
					return 0, fmt.Errorf("attempt: %w", err)
				}
				return 1, nil
			})
		})
		if err := Sleep(tk, ms); err != nil {
			return err
		}
		rt.Cancel("go")
		_, err := rt.Await(tk)
		if !IsCancelled(err) || attempts != 1 || !strings.Contains(err.Error(), "go") {
			t.Errorf("Retry: %s after %d attempts", describe(err), attempts)
		}
		return nil
	})
}

// AsCompletedBounded: "The sequence must be ranged over from task t, at
// most once". Ranging it a second time is a programming error; principle
// 4 of DESIGN.md says misuse is loud (a panic naming it). Ranging again
// must not silently run every function a second time.
func TestFanoutEdge_AsCompletedBoundedRangedTwice(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		runs := 0
		seq := AsCompletedBounded(tk, 1, func(*T) (int, error) { runs++; return 1, nil })
		for range seq {
		}
		v := func() (v any) {
			defer func() { v = recover() }()
			for range seq {
			}
			return nil
		}()
		if v == nil || runs != 1 {
			t.Errorf("second range: panic %v, the function ran %d times (want a panic naming the misuse, 1 run)", v, runs)
		}
		return nil
	})
}

// A bounded child cancelled at each point of its life: queued (never
// runs), running (its slot goes to the next queued child at once), done
// (nothing happens). Cancelled children do not fail the group.
func TestFanoutEdge_BoundedChildCancelledAtEachPoint(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var bg *BoundedGroup
		err := BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			bg = g
			var tasks []*Task[struct{}]
			for i := range 4 {
				task, err := SpawnBoundedErr(g, func(ct *T) error {
					r.log("c%d start", i)
					err := Sleep(ct, 10*ms)
					r.log("c%d end %v", i, err)
					return err
				})
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			tasks[1].Cancel() // queued
			if err := Sleep(tk, 5*ms); err != nil {
				return err
			}
			tasks[0].Cancel() // running
			if err := Sleep(tk, 20*ms); err != nil {
				return err
			}
			tasks[2].Cancel() // done
			return nil
		})
		r.log("group %v started=%d free=%d running=%d queued=%d", err, bg.Started(), bg.Free(), bg.Running(), bg.Queued())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c0 start",
		"5ms c0 end asyncio: cancelled",
		"5ms c2 start",
		"15ms c2 end <nil>",
		"15ms c3 start",
		"25ms c3 end <nil>",
		"25ms group <nil> started=3 free=1 running=0 queued=0",
	}, r)
}

// A loop closed in the middle of a fan-out (a bounded group with queued
// children waiting on a limiter, a hedge, a retry backoff): Close unwinds
// everything and no goroutine is left.
func TestFanoutEdge_LoopClosedMidFanout(t *testing.T) {
	l := NewLoop(WithVirtualTime())
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	lim := NewLimiter(1, 1)
	//asynciovet:ignore unawaitedtask left pending on purpose: the loop closes under it
	CreateTask(l, func(tk *T) (struct{}, error) {
		return struct{}{}, BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			for range 5 {
				if _, err := SpawnBoundedErr(g, func(ct *T) error { return lim.Acquire(ct) }); err != nil {
					return err
				}
			}
			_, err := SpawnBoundedErr(g, func(ct *T) error {
				_, err := Hedge(ct, HedgePolicy{MaxAttempts: 3, Delay: ms}, func(ht *T, _ int) (int, error) {
					return 0, Sleep(ht, time.Hour)
				})
				return err
			})
			return err
		})
	})
	//asynciovet:ignore unawaitedtask left pending on purpose: the loop closes under it
	CreateTask(l, func(tk *T) (int, error) {
		return Retry(tk, RetryPolicy{MaxAttempts: 5, Initial: time.Hour}, func(*T, Attempt) (int, error) { return 0, errors.New("x") })
	})
	l.CallLater(1500*ms, l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l) // goleak (main_test.go) checks that no goroutine is left
	if n := len(AllTasks(l)); n != 0 {
		t.Errorf("%d tasks listed on the closed loop", n)
	}
}

// AsCompletedBounded: an outside cancellation delivered to an await in
// the loop body, which then breaks out with it. Questionable, recorded
// rather than failed: the break calls g.Cancel, TaskGroup's exit finds
// the outside request still counted (Cancelling() == 1, asyncio 3.15's
// TaskGroup.cancel rule) and returns its own message-less cancellation,
// and AsCompletedBounded re-arms it: a cleanup await after the loop gets
// a second CancelledError(""), for the one request the body already saw.
func TestFanoutEdge_AsCompletedBoundedCancelSeenInTheBodyThenBreak(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var seen, cleanup error
		inner := CreateTask(tk, func(it *T) (struct{}, error) {
			for range AsCompletedBounded(it, 1,
				func(ct *T) (int, error) { return 1, Sleep(ct, ms) },
				func(ct *T) (int, error) { return 2, Sleep(ct, time.Hour) },
			) {
				if err := Sleep(it, 10*ms); err != nil {
					seen = err
					break
				}
			}
			cleanup = Sleep(it, ms) // cleanup after the loop
			return struct{}{}, seen
		})
		if err := Sleep(tk, 5*ms); err != nil {
			return err
		}
		inner.Cancel("outer")
		//asynciovet:ignore droppedcancel the task's outcome is checked through seen and cleanup
		_, _ = inner.Await(tk)
		if describe(seen) != `CancelledError("outer")` || cleanup != nil {
			t.Errorf("the body saw %s; the cleanup await after the loop got %s (want nil: the body already saw the request)",
				describe(seen), describe(cleanup))
		}
		return nil
	})
}

// The same with a plain BoundedTaskGroup whose body sees the outside
// cancellation and returns it: after the group, a cleanup await runs
// normally (TaskGroup's rule), as the reference for the test above.
func TestFanoutEdge_BoundedGroupCancelSeenInTheBodyIsDeliveredOnce(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var seen, cleanup error
		inner := CreateTask(tk, func(it *T) (struct{}, error) {
			seen = BoundedTaskGroup(it, 1, func(g *BoundedGroup) error {
				if _, err := SpawnBoundedErr(g, func(ct *T) error { return Sleep(ct, time.Hour) }); err != nil {
					return err
				}
				return Sleep(it, 10*ms)
			})
			cleanup = Sleep(it, ms)
			return struct{}{}, seen
		})
		if err := Sleep(tk, 5*ms); err != nil {
			return err
		}
		inner.Cancel("outer")
		//asynciovet:ignore droppedcancel the task's outcome is checked through seen and cleanup
		_, _ = inner.Await(tk)
		if describe(seen) != `CancelledError("outer")` || cleanup != nil {
			t.Errorf("group %s; cleanup %s", describe(seen), describe(cleanup))
		}
		return nil
	})
}
