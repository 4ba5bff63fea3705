package cpython

// CPython 3.13 Lib/test/test_asyncio/test_timeouts.py. Python chains
// exceptions implicitly (__context__); Go does not, so the tests that check
// those chains check the explicit part here (a *TimeoutError keeps the
// CancelledError it converted in Cause, Python's __cause__) and are listed
// as divergences.

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// timeoutCause returns the Cause of a *TimeoutError (nil if err is not one).
func timeoutCause(err error) error {
	var te *asyncio.TimeoutError
	if errors.As(err, &te) {
		return te.Cause
	}
	return nil
}

func TestTimeouts_test_timeout_basic(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			return asyncio.Sleep(tk, 10000*ms)
		})
		raises(t, err, "TimeoutError")
		check(t, cm.Expired(), "cm.expired()")
		return nil
	})
}

func TestTimeouts_test_timeout_at_basic(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		deadline := tk.Loop().Time() + 10*ms
		err := asyncio.TimeoutAt(tk, deadline, func(s *asyncio.TimeoutScope) error {
			cm = s
			return asyncio.Sleep(tk, 10000*ms)
		})
		raises(t, err, "TimeoutError")
		check(t, cm.Expired(), "cm.expired()")
		eq(t, cm.When(), deadline)
		return nil
	})
}

func TestTimeouts_test_nested_timeouts(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm1, cm2 *asyncio.TimeoutScope
		wasCancelled := false
		deadline := tk.Loop().Time() + 10*ms
		err := asyncio.TimeoutAt(tk, deadline, func(s1 *asyncio.TimeoutScope) error {
			cm1 = s1
			// Only the topmost context manager should raise TimeoutError
			err := asyncio.TimeoutAt(tk, deadline, func(s2 *asyncio.TimeoutScope) error {
				cm2 = s2
				return asyncio.Sleep(tk, 10000*ms)
			})
			if asyncio.IsCancelled(err) {
				wasCancelled = true
			}
			return err
		})
		raises(t, err, "TimeoutError")
		check(t, wasCancelled, "cancelled")
		check(t, cm1.Expired(), "cm1.expired()")
		check(t, cm2.Expired(), "cm2.expired()")
		return nil
	})
}

func TestTimeouts_test_waiter_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		wasCancelled := false
		err := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			err := asyncio.Sleep(tk, 10000*ms)
			if asyncio.IsCancelled(err) {
				wasCancelled = true
			}
			return err
		})
		raises(t, err, "TimeoutError")
		check(t, wasCancelled, "cancelled")
		return nil
	})
}

func TestTimeouts_test_timeout_not_called(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10000*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			return asyncio.Sleep(tk, 10*ms)
		})
		noErr(t, err)
		t1 := tk.Loop().Time()
		check(t, !cm.Expired(), "not expired")
		check(t, cm.When() > t1, "cm.when() > t1")
		return nil
	})
}

func TestTimeouts_test_timeout_disabled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		noErr(t, asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			return asyncio.Sleep(tk, 10*ms)
		}))
		check(t, !cm.Expired(), "not expired")
		eq(t, cm.When(), asyncio.Never, "when() is None")
		return nil
	})
}

func TestTimeouts_test_timeout_at_disabled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		noErr(t, asyncio.TimeoutAt(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			return asyncio.Sleep(tk, 10*ms)
		}))
		check(t, !cm.Expired(), "not expired")
		eq(t, cm.When(), asyncio.Never, "when() is None")
		return nil
	})
}

// zeroTimeout is the body of test_timeout_zero and its variants.
func zeroTimeout(t *testing.T, tk *asyncio.T, d, sleep time.Duration, past bool) {
	t0 := tk.Loop().Time()
	var cm *asyncio.TimeoutScope
	err := asyncio.Timeout(tk, d, func(s *asyncio.TimeoutScope) error {
		cm = s
		return asyncio.Sleep(tk, sleep)
	})
	t1 := tk.Loop().Time()
	raises(t, err, "TimeoutError")
	check(t, cm.Expired(), "expired")
	if past {
		check(t, t0 >= cm.When() && cm.When() <= t1, "t0 >= cm.when() <= t1")
	} else {
		check(t, t0 <= cm.When() && cm.When() <= t1, "t0 <= cm.when() <= t1")
	}
}

func TestTimeouts_test_timeout_zero(t *testing.T) {
	run(t, func(tk *asyncio.T) error { zeroTimeout(t, tk, 0, 10000*ms, false); return nil })
}

func TestTimeouts_test_timeout_zero_sleep_zero(t *testing.T) {
	run(t, func(tk *asyncio.T) error { zeroTimeout(t, tk, 0, 0, false); return nil })
}

func TestTimeouts_test_timeout_in_the_past_sleep_zero(t *testing.T) {
	run(t, func(tk *asyncio.T) error { zeroTimeout(t, tk, -11000*ms, 0, true); return nil })
}

func TestTimeouts_test_foreign_exception_passed(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			return exc("KeyError")
		})
		raises(t, err, "KeyError")
		check(t, !cm.Expired(), "not expired")
		return nil
	})
}

func TestTimeouts_test_timeout_exception_context(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			_ = zeroDivision() // try: 1/0 finally: await asyncio.sleep(1)
			return asyncio.Sleep(tk, 1000*ms)
		})
		raises(t, err, "TimeoutError")
		// TimeoutError caused by CancelledError (the __context__ links
		// have no Go counterpart).
		raises(t, timeoutCause(err), "CancelledError", "e.__cause__")
		return nil
	})
}

func TestTimeouts_test_foreign_exception_on_timeout(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		crash := func(tk *asyncio.T) error {
			asyncio.Sleep(tk, 1000*ms)
			return zeroDivision()
		}
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error { cm = s; return crash(tk) })
		raises(t, err, "ZeroDivisionError")
		check(t, timeoutCause(err) == nil, "e.__cause__ is None")
		check(t, cm.Expired(), "the scope expired (3.13 puts a TimeoutError in the __context__ chain)")
		return nil
	})
}

func TestTimeouts_test_foreign_exception_on_timeout_2(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			// try: (try: raise ValueError finally: await sleep(1))
			// finally: (try: raise KeyError finally: 1/0)
			_ = exc("ValueError")
			asyncio.Sleep(tk, 1000*ms)
			_ = exc("KeyError")
			return zeroDivision()
		})
		raises(t, err, "ZeroDivisionError")
		check(t, timeoutCause(err) == nil, "e.__cause__ is None")
		return nil
	})
}

func TestTimeouts_test_foreign_cancel_doesnt_timeout_if_not_expired(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10000*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			asyncio.CurrentTask(tk).Cancel()
			return asyncio.Sleep(tk, 10000*ms)
		})
		cancelled(t, err)
		check(t, !cm.Expired(), "not expired")
		tk.Uncancel() // IsolatedAsyncioTestCase's task is done here; ours goes on
		return nil
	})
}

func TestTimeouts_test_outer_task_is_not_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			err := asyncio.Timeout(tk, 1*ms, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(tk, 10000*ms) })
			raises(t, err, "TimeoutError")
			return nil
		}))
		_, err := task.Await(tk)
		noErr(t, err)
		check(t, !task.Cancelled(), "not cancelled")
		check(t, task.Done(), "done")
		return nil
	})
}

func TestTimeouts_test_nested_timeouts_concurrent(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// CPython blocks the loop 10 ms (time.sleep) inside the inner
		// scope; the outer deadline passes meanwhile. On the virtual clock
		// the outer deadline passes while the task sleeps; either way the
		// outer fires first and the inner scope lets the cancellation
		// through (its assertRaises(TimeoutError) never completes).
		innerDone := false
		err := asyncio.Timeout(tk, 2*ms, func(*asyncio.TimeoutScope) error {
			err := asyncio.Timeout(tk, 100*ms, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(tk, 1000*ms) })
			if isClass(err, "TimeoutError") {
				innerDone = true
				return nil
			}
			return err
		})
		raises(t, err, "TimeoutError")
		check(t, !innerDone, "the inner scope did not time out")
		return nil
	})
}

func TestTimeouts_test_nested_timeouts_loop_busy(t *testing.T) {
	// After the inner timeout is an expensive operation which should be
	// stopped by the outer timeout. CPython busy-waits 0.1 s (time.sleep)
	// so that both deadlines pass before the next iteration; the virtual
	// clock cannot move during a step, so both variants run: the inner
	// deadline passing alone, and both passing in the same iteration.
	for _, sameIteration := range []bool{false, true} {
		run(t, func(tk *asyncio.T) error {
			loop := tk.Loop()
			t0 := loop.Time()
			err := asyncio.TimeoutAt(tk, t0+100*ms, func(*asyncio.TimeoutScope) error { // (1)
				innerWhen := loop.Time() + 10*ms
				if sameIteration {
					innerWhen = t0 + 100*ms
				}
				err := asyncio.TimeoutAt(tk, innerWhen, func(*asyncio.TimeoutScope) error { // (2)
					return asyncio.Sleep(tk, 1000*ms)
				})
				if !isClass(err, "TimeoutError") {
					return err
				}
				// TimeoutError was caught by (2)
				return asyncio.Sleep(tk, 10000*ms) // This sleep should be interrupted by (1)
			})
			t1 := loop.Time()
			raises(t, err, "TimeoutError")
			check(t, t0 <= t1 && t1 <= t0+1000*ms, "t0 <= t1 <= t0 + 1")
			return nil
		})
	}
}

func TestTimeouts_test_reschedule(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		loop := tk.Loop()
		fut := asyncio.NewFuture[*asyncio.TimeoutScope](tk)
		deadline1 := loop.Time() + 10000*ms
		deadline2 := deadline1 + 20000*ms
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TimeoutAt(tk, deadline1, func(s *asyncio.TimeoutScope) error {
				fut.SetResult(s)
				return asyncio.Sleep(tk, 50000*ms)
			})
		}))
		cm, err := fut.Await(tk)
		if err != nil {
			return err
		}
		eq(t, cm.When(), deadline1)
		noErr(t, cm.Reschedule(deadline2))
		eq(t, cm.When(), deadline2)
		noErr(t, cm.Reschedule(asyncio.Never))
		eq(t, cm.When(), asyncio.Never)
		task.Cancel()
		_, err = task.Await(tk)
		cancelled(t, err)
		check(t, !cm.Expired(), "not expired")
		return nil
	})
}

func TestTimeouts_test_repr_active(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return asyncio.Timeout(tk, 10000*ms, func(s *asyncio.TimeoutScope) error {
			check(t, regexp.MustCompile(`<Timeout \[active\] when=\d+\.\d*>`).MatchString(s.String()), s.String())
			return nil
		})
	})
}

func TestTimeouts_test_repr_expired(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error { cm = s; return asyncio.Sleep(tk, 10000*ms) })
		raises(t, err, "TimeoutError")
		eq(t, cm.String(), "<Timeout [expired]>")
		return nil
	})
}

func TestTimeouts_test_repr_finished(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		noErr(t, asyncio.Timeout(tk, 10000*ms, func(s *asyncio.TimeoutScope) error { cm = s; return asyncio.Sleep(tk, 0) }))
		eq(t, cm.String(), "<Timeout [finished]>")
		return nil
	})
}

func TestTimeouts_test_repr_disabled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			eq(t, s.String(), "<Timeout [active] when=None>")
			return nil
		})
	})
}

func TestTimeouts_test_nested_timeout_in_finally(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var e2 error
		e1 := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			err := asyncio.Sleep(tk, 1000*ms)
			// finally:
			e2 = asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(tk, 10000*ms) })
			raises(t, e2, "TimeoutError", "cm2")
			return err
		})
		raises(t, e1, "TimeoutError", "cm1")
		// Each TimeoutError is caused by a CancelledError (the __context__
		// links between them have no Go counterpart).
		raises(t, timeoutCause(e1), "CancelledError", "e1.__cause__")
		raises(t, timeoutCause(e2), "CancelledError", "e2.__cause__")
		check(t, timeoutCause(e1) != timeoutCause(e2), "two different CancelledErrors")
		return nil
	})
}

func TestTimeouts_test_timeout_after_cancellation(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		asyncio.CurrentTask(tk).Cancel()
		cancelled(t, asyncio.Sleep(tk, 1000*ms)) // work which will be cancelled
		// finally:
		err := asyncio.Timeout(tk, 0, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(tk, 1000*ms) }) // some cleanup
		raises(t, err, "TimeoutError")
		tk.Uncancel() // IsolatedAsyncioTestCase's task ends here; ours goes on
		return nil
	})
}

func TestTimeouts_test_cancel_in_timeout_after_cancellation(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		asyncio.CurrentTask(tk).Cancel()
		cancelled(t, asyncio.Sleep(tk, 1000*ms)) // work which will be cancelled
		// finally:
		err := asyncio.Timeout(tk, 1000*ms, func(*asyncio.TimeoutScope) error {
			asyncio.CurrentTask(tk).Cancel()
			return asyncio.Sleep(tk, 2000*ms) // some cleanup
		})
		cancelled(t, err)
		tk.Uncancel()
		tk.Uncancel()
		return nil
	})
}

func TestTimeouts_test_timeout_finished(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		noErr(t, asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error { cm = s; return nil }))
		raisesRegex(t, cm.Reschedule(20*ms), "*asyncio.RuntimeError", "finished")
		return nil
	})
}

func TestTimeouts_test_timeout_expired(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm *asyncio.TimeoutScope
		err := asyncio.Timeout(tk, 10*ms, func(s *asyncio.TimeoutScope) error { cm = s; return asyncio.Sleep(tk, 1000*ms) })
		raises(t, err, "TimeoutError")
		raisesRegex(t, cm.Reschedule(20*ms), "*asyncio.RuntimeError", "expired")
		return nil
	})
}

func TestTimeouts_test_timeout_expiring(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.Timeout(tk, 10*ms, func(cm *asyncio.TimeoutScope) error {
			cancelled(t, asyncio.Sleep(tk, 1000*ms))
			raisesRegex(t, cm.Reschedule(20*ms), "*asyncio.RuntimeError", "expiring")
			return nil
		})
		noErr(t, err)
		return nil
	})
}

func TestTimeouts_test_timeout_not_entered(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var cm asyncio.TimeoutScope // asyncio.timeout(0.01), not entered
		raisesRegex(t, cm.Reschedule(20*ms), "*asyncio.RuntimeError", "has not been entered")
		return nil
	})
}

func TestTimeouts_test_timeout_without_task(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// await_without_task(cm.__aenter__()): Timeout called from a plain
		// callback with a task handle.
		done := asyncio.NewFuture[error](tk)
		tk.Loop().CallSoon(func() {
			done.SetResult(asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
				t.Error("the body ran")
				return nil
			}))
		})
		err, _ := done.Await(tk)
		raisesRegex(t, err, "*asyncio.RuntimeError", "task")
		var cm asyncio.TimeoutScope
		raisesRegex(t, cm.Reschedule(20*ms), "*asyncio.RuntimeError", "has not been entered")
		return nil
	})
}

func TestTimeouts_test_timeout_taskgroup(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		task := fn0(func(tk *asyncio.T) error {
			asyncio.Sleep(tk, 2000*ms) // Will be interrupted after 0.01 second
			return zeroDivision()      // Crash in cleanup
		})
		err := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, task)
				_ = exc("ValueError") // try: raise ValueError finally: await sleep(1)
				return asyncio.Sleep(tk, 1000*ms)
			})
		})
		eg := group(t, err)
		eq(t, len(eg.Errs), 1)
		raises(t, eg.Errs[0], "ZeroDivisionError")
		check(t, timeoutCause(err) == nil, "eg.__cause__ is None")
		return nil
	})
}
