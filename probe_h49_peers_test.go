package asyncio

// Probe h49: the fan-out toolkit against its Python peers' own test
// suites. Each test names the peer test it ports; where our documented
// semantics differ on purpose, the test checks ours in the same situation
// and the comment says how the peer differs. Everything runs on virtual
// time, so the times checked are exact.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// ---- aiolimiter (mjpieters/aiolimiter, tests/test_aiolimiter.py) ----

// test_has_capacity: AsyncLimiter(1) (1 per 60 s) has capacity for 1, not
// for 42; after one acquire it has none. has_capacity(k) is Tokens() >= k
// here (TryAcquire takes the tokens; has_capacity only looks).
func TestH49_AiolimiterHasCapacity(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1.0/60, 1)
		if !(lim.Tokens() >= 1) || lim.Tokens() >= 42 {
			t.Errorf("fresh: tokens %v", lim.Tokens())
		}
		if err := lim.Acquire(tk); err != nil {
			return err
		}
		if lim.Tokens() >= 1 || lim.TryAcquire(tk, 1) {
			t.Errorf("after acquire: tokens %v, TryAcquire granted", lim.Tokens())
		}
		return nil
	})
}

// test_over_acquire: acquire(42) on a limiter of capacity 1 is a
// ValueError; here a returned *ValueError, at once, taking nothing.
func TestH49_AiolimiterOverAcquire(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1.0/60, 1)
		err := lim.AcquireN(tk, 42)
		var ve *ValueError
		if !errors.As(err, &ve) || lim.Tokens() != 1 || tk.Loop().Time() != 0 {
			t.Errorf("AcquireN(42) = %s, tokens %v at %v", describe(err), lim.Tokens(), tk.Loop().Time())
		}
		return nil
	})
}

// test_acquire (both the acquire() and the `async with` form, which are
// one call here): AsyncLimiter(5, 10), 10 tasks: 5 at once; by t=3 one
// more, by t=7 two more, by t=11 the rest. aiolimiter is a leaky bucket
// checked when the mocked clock is moved; as a token bucket of rate 0.5/s
// and burst 5 ours admits the same tasks by those times, each at the exact
// moment its token is there: 2s, 4s, 6s, 8s, 10s.
func TestH49_AiolimiterAcquire(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(5.0/10, 5)
		var tasks []*Task[struct{}]
		for i := range 10 {
			tasks = append(tasks, startTask(tk, fmt.Sprint("w", i), func(tk *T) error {
				if err := lim.Acquire(tk); err != nil {
					return err
				}
				r.log("w%d", i)
				return nil
			}))
		}
		done := func() int {
			n := 0
			for _, task := range tasks {
				if task.Done() {
					n++
				}
			}
			return n
		}
		for _, at := range []time.Duration{0, 3 * time.Second, 7 * time.Second, 11 * time.Second} {
			if err := Sleep(tk, at-tk.Loop().Time()); err != nil {
				return err
			}
			if err := Sleep(tk, 0); err != nil { // let the tasks admitted now end
				return err
			}
			r.log("done %d", done())
		}
		awaitAll(tk, tasks...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s w0", "0s w1", "0s w2", "0s w3", "0s w4", "0s done 5",
		"2s w5", "3s done 6",
		"4s w6", "6s w7", "7s done 8",
		"8s w8", "10s w9", "11s done 10",
	}, r)
}

// test_acquire_wait_time: AsyncLimiter(3, 3) after acquire(1): acquire(3)
// takes exactly 1 s (one token per second, two left).
func TestH49_AiolimiterAcquireWaitTime(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1, 3)
		if err := lim.AcquireN(tk, 1); err != nil {
			return err
		}
		if err := lim.AcquireN(tk, 3); err != nil {
			return err
		}
		if now := tk.Loop().Time(); now != time.Second {
			t.Errorf("acquire(3) granted at %v, want 1s", now)
		}
		return nil
	})
}

// test_decreasing_acquire: AsyncLimiter(3, 3) after acquire(1); acquire(3)
// waits (1 s), and an acquire(1) made meanwhile is granted AT ONCE by
// aiolimiter (it barges past the waiting larger request, pushing it to
// 2 s). Ours is FIFO without barging (README "Fan-out clients"): the
// acquire(1) queues behind the acquire(3), which is granted at 1 s as it
// would have been alone; the acquire(1) then waits for its own token, 2 s.
// (The hostile angle of the brief: an AcquireN larger than what is there,
// with a smaller request behind it: the smaller one never overtakes.)
func TestH49_AiolimiterDecreasingAcquireIsFIFOHere(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(1, 3)
		if err := lim.AcquireN(tk, 1); err != nil {
			return err
		}
		big := startTask(tk, "big", func(tk *T) error {
			if err := lim.AcquireN(tk, 3); err != nil {
				return err
			}
			r.log("acquire(3)")
			return nil
		})
		if err := Sleep(tk, 0); err != nil { // big waits now
			return err
		}
		if lim.TryAcquire(tk, 1) {
			r.log("TryAcquire(1) barged")
		}
		if err := lim.AcquireN(tk, 1); err != nil {
			return err
		}
		r.log("acquire(1)")
		awaitAll(tk, big)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"1s acquire(3)", "2s acquire(1)"}, r)
}

// test_task_cancelled: AsyncLimiter(3, 3) after acquire(1); two tasks ask
// for 3 (the second would wait until 4 s); the first is cancelled, and the
// second is granted at 1 s, exactly.
func TestH49_AiolimiterTaskCancelled(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(1, 3)
		if err := lim.AcquireN(tk, 1); err != nil {
			return err
		}
		var tasks []*Task[struct{}]
		for i := range 2 {
			tasks = append(tasks, startTask(tk, fmt.Sprint("t", i), func(tk *T) error {
				err := lim.AcquireN(tk, 3)
				r.log("t%d: %v", i, err)
				return nil
			}))
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		tasks[0].Cancel()
		awaitAll(tk, tasks...)
		st := lim.Stats()
		r.log("granted=%d wakeups=%d refunded=%d waiters=%d", st.Granted, st.Wakeups, st.Refunded, lim.Waiters())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s t0: asyncio: cancelled",
		"1s t1: <nil>",
		"1s granted=2 wakeups=1 refunded=0 waiters=0",
	}, r)
}

// test_multiple_loops: aiolimiter warns (RuntimeWarning) when an instance
// is reused by a second asyncio.run and then serves it. Ours binds to the
// loop of its first acquisition, as asyncio's locks do: a second loop,
// after the first one closed, gets a *RuntimeError "is bound to a
// different event loop", taking nothing and queueing nothing (the brief's
// "Limiter used after its loop closed"). TryAcquire on the new loop
// panics with that error.
func TestH49_AiolimiterMultipleLoops(t *testing.T) {
	lim := NewLimiter(1, 1)
	first := func(tk *T) error {
		// ensure a task has to wait, then leave it waiting: Run cancels it
		var tasks []*Task[struct{}]
		for range 5 {
			tasks = append(tasks, startTask(tk, "w", func(tk *T) error { return lim.Acquire(tk) }))
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		if lim.Waiters() != 4 {
			t.Errorf("waiters %d, want 4", lim.Waiters())
		}
		for i, w := range tasks {
			if w.Done() != (i == 0) {
				t.Errorf("task %d done=%v: only the first is served", i, w.Done())
			}
		}
		return nil
	}
	runVirtual(t, first)
	if n := lim.Waiters(); n != 0 {
		t.Errorf("after the first loop: %d waiters left", n)
	}
	runVirtual(t, func(tk *T) error {
		err := lim.Acquire(tk)
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "bound to a different event loop") {
			t.Errorf("Acquire on a second loop = %s", describe(err))
		}
		if lim.Waiters() != 0 || lim.Stats().Granted != 1 {
			t.Errorf("second loop changed the limiter: %v", lim.Stats())
		}
		v := mustPanic(t, "TryAcquire on a second loop", func() { lim.TryAcquire(tk, 1) })
		if e, ok := v.(error); !ok || !errors.As(e, &re) {
			t.Errorf("TryAcquire panicked with %v", v)
		}
		return nil
	})
}

// ---- tenacity (jd/tenacity, tests/test_asyncio.py) ----

// noIOErrorAfterCount is tenacity's NoIOErrorAfterCount: an IOError
// (io.ErrUnexpectedEOF here) count times, then true.
type noIOErrorAfterCount struct{ counter, count int }

func (n *noIOErrorAfterCount) goNow() (bool, error) {
	if n.counter < n.count {
		n.counter++
		return false, io.ErrUnexpectedEOF
	}
	return true, nil
}

// zeroJitter makes every backoff 0 (tenacity's default wait is none).
var zeroJitter = RandFunc(func() float64 { return 0 })

// test_retry / test_retry_using_async_retying: the attempt sleeps 10µs
// and fails 5 times, then succeeds: 6 attempts, counter 5. tenacity
// retries for ever by default; a RetryPolicy needs a stopping rule.
func TestH49_TenacityRetry(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		thing := &noIOErrorAfterCount{count: 5}
		n := 0
		v, err := Retry(tk, RetryPolicy{MaxAttempts: 100, Rand: zeroJitter}, func(ct *T, a Attempt) (bool, error) {
			n = a.N
			if err := Sleep(ct, 10*time.Microsecond); err != nil {
				return false, err
			}
			return thing.goNow()
		})
		if !v || err != nil || thing.counter != 5 || n != 6 || tk.Loop().Time() != 60*time.Microsecond {
			t.Errorf("Retry = %v, %s; counter %d, attempts %d at %v", v, describe(err), thing.counter, n, tk.Loop().Time())
		}
		return nil
	})
}

// test_stop_after_attempt / test_do_max_attempts: stop_after_attempt(n)
// gives up after n attempts with a RetryError; ours is a *RetryError
// (Attempts n) that wraps the last error.
func TestH49_TenacityStopAfterAttempt(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		for _, max := range []int{2, 3} {
			thing := &noIOErrorAfterCount{count: 10}
			_, err := Retry(tk, RetryPolicy{MaxAttempts: max, Rand: zeroJitter}, func(ct *T, a Attempt) (bool, error) {
				return thing.goNow()
			})
			var re *RetryError
			if !errors.As(err, &re) || re.Attempts != max || thing.counter != max || !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, ErrRetriesExhausted) {
				t.Errorf("max %d: %s, counter %d", max, describe(err), thing.counter)
			}
		}
		return nil
	})
}

// test_attempt_number_is_correct_for_interleaved_coroutines: two retried
// calls in one gather, each attempt sleeping, no wait between attempts:
// the attempts interleave, and each call's attempt numbers are 1, 2, 3.
func TestH49_TenacityInterleavedAttemptNumbers(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var log []string
		call := func(name string) func(*T) (bool, error) {
			thing := &noIOErrorAfterCount{count: 2}
			return func(ct *T) (bool, error) {
				return Retry(ct, RetryPolicy{MaxAttempts: 10, Rand: zeroJitter}, func(ct *T, a Attempt) (bool, error) {
					if err := Sleep(ct, 10*time.Microsecond); err != nil {
						return false, err
					}
					log = append(log, fmt.Sprint(name, a.N))
					return thing.goNow()
				})
			}
		}
		if _, err := GatherFuncs(tk, call("a"), call("b")).Await(tk); err != nil {
			return err
		}
		if got := strings.Join(log, " "); got != "a1 b1 a2 b2 a3 b3" {
			t.Errorf("attempts %q", got)
		}
		return nil
	})
}

// test_reraise: stop_after_attempt(1), reraise=True raises the attempt's
// own CustomError. Ours always returns the *RetryError, which wraps it:
// errors.As finds the CustomError (Go's form of "reraise").
func TestH49_TenacityReraise(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		type customError struct{ error }
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 1}, func(*T, Attempt) (int, error) {
			return 0, customError{errors.New("custom")}
		})
		var ce customError
		if !errors.As(err, &ce) {
			t.Errorf("Retry = %s", describe(err))
		}
		return nil
	})
}

// test_sleeps: stop_after_attempt(1), wait_fixed(1): no wait after the
// last attempt (under 1.1 s there; exactly 0 here).
func TestH49_TenacityNoSleepAfterTheLastAttempt(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 1, Initial: time.Second}, func(*T, Attempt) (int, error) {
			return 0, errors.New("x")
		})
		if !errors.Is(err, ErrRetriesExhausted) || tk.Loop().Time() != 0 {
			t.Errorf("Retry = %s at %v", describe(err), tk.Loop().Time())
		}
		return nil
	})
}

// test_retry_with_result (retry_if_result(lt_3)) and
// test_retry_with_async_exc (retry_if_exception(is_exc)): ours retries
// on errors only, chosen by Retryable; a result to retry on is an error
// the attempt returns. Both: 3 attempts; an error Retryable refuses is
// returned as it is, unwrapped, after the first attempt.
func TestH49_TenacityRetryIfException(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		errCustom := errors.New("custom")
		errOther := errors.New("other")
		isExc := func(err error) bool { return errors.Is(err, errCustom) }
		attempts := 0
		v, err := Retry(tk, RetryPolicy{MaxAttempts: 10, Retryable: isExc, Rand: zeroJitter}, func(*T, Attempt) (int, error) {
			attempts++
			if attempts < 3 {
				return 0, errCustom
			}
			return attempts, nil
		})
		if v != 3 || err != nil {
			t.Errorf("retry_if_exception: %d, %s", v, describe(err))
		}
		attempts = 0
		_, err = Retry(tk, RetryPolicy{MaxAttempts: 10, Retryable: isExc, Rand: zeroJitter}, func(*T, Attempt) (int, error) {
			attempts++
			return 0, errOther
		})
		if err != errOther || attempts != 1 {
			t.Errorf("not retryable: %s after %d", describe(err), attempts)
		}
		return nil
	})
}

// ---- backoff (litl/backoff, tests/test_backoff_async.py) ----

// test_on_exception / test_on_exception_tuple: retried on the listed
// types until it succeeds: KeyError, ValueError, then true.
func TestH49_BackoffOnExceptionTuple(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		errKey, errValue := errors.New("KeyError"), errors.New("ValueError")
		var log []error
		v, err := Retry(tk, RetryPolicy{MaxAttempts: 10, Rand: zeroJitter,
			Retryable: func(err error) bool { return errors.Is(err, errKey) || errors.Is(err, errValue) },
		}, func(*T, Attempt) (bool, error) {
			switch len(log) {
			case 0:
				log = append(log, errKey)
				return false, errKey
			case 1:
				log = append(log, errValue)
				return false, errValue
			}
			return true, nil
		})
		if !v || err != nil || len(log) != 2 {
			t.Errorf("Retry = %v, %s; log %v", v, describe(err), log)
		}
		return nil
	})
}

// test_on_exception_max_tries: max_tries=3 gives up after 3 and raises
// the KeyError itself; ours: the *RetryError wrapping it (errors.Is).
func TestH49_BackoffOnExceptionMaxTries(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		errKey := errors.New("KeyError")
		n := 0
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 3, Rand: zeroJitter}, func(*T, Attempt) (bool, error) {
			n++
			return false, errKey
		})
		if !errors.Is(err, errKey) || n != 3 {
			t.Errorf("Retry = %s after %d", describe(err), n)
		}
		return nil
	})
}

// test_on_exception_giveup_predicate: giveup=on_baz: the errors foo, bar
// are retried, baz gives up: raised as it is, every value used.
func TestH49_BackoffGiveupPredicate(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		vals := []string{"baz", "bar", "foo"}
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 100, Rand: zeroJitter,
			Retryable: func(err error) bool { return err.Error() != "baz" },
		}, func(*T, Attempt) (bool, error) {
			v := vals[len(vals)-1]
			vals = vals[:len(vals)-1]
			return false, errors.New(v)
		})
		var re *RetryError
		if err == nil || err.Error() != "baz" || errors.As(err, &re) || len(vals) != 0 {
			t.Errorf("Retry = %s, vals %v", describe(err), vals)
		}
		return nil
	})
}

// test_on_exception_success_full_jitter: expo with factor 0.5 and full
// jitter: the wait before retry i+1 is at most 0.5 * 2**i s. Ours with
// Initial 500ms (Multiplier 2): a jitter source of 0.999 gives waits just
// under the caps, exactly x * cap, at exact virtual times.
func TestH49_BackoffFullJitterWaits(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var delays, starts []time.Duration
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 10, Initial: 500 * ms,
			Rand: RandFunc(func() float64 { return 0.999 }),
		}, func(ct *T, a Attempt) (bool, error) {
			delays = append(delays, a.Delay)
			starts = append(starts, ct.Loop().Time())
			if a.N < 3 {
				return false, errors.New("catch me")
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		want := []time.Duration{0, 499500 * time.Microsecond, 999 * ms}
		if fmt.Sprint(delays) != fmt.Sprint(want) ||
			fmt.Sprint(starts) != fmt.Sprint([]time.Duration{0, want[1], want[1] + want[2]}) {
			t.Errorf("delays %v, starts %v", delays, starts)
		}
		return nil
	})
}

// test_on_exception_coro_cancelling: an attempt that catches the
// CancelledError of its own sleep and returns true succeeds: the retried
// call, and the task, end with true (not cancelled).
func TestH49_BackoffCoroCancelling(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		started := NewFuture[struct{}](tk)
		task := CreateTask(tk, func(ct *T) (bool, error) {
			return Retry(ct, RetryPolicy{MaxAttempts: 100}, func(ct *T, a Attempt) (bool, error) {
				if !started.Done() {
					started.SetResult(struct{}{})
				}
				if err := Sleep(ct, 10*time.Second); err != nil {
					if IsCancelled(err) {
						return true, nil
					}
					return false, err
				}
				return false, nil
			})
		})
		if _, err := started.Await(tk); err != nil {
			return err
		}
		task.Cancel()
		v, err := task.Await(tk)
		if !v || err != nil || task.Cancelled() {
			t.Errorf("task = %v, %s", v, describe(err))
		}
		return nil
	})
}

// The brief's hostile angle: an attempt that returns a cancellation of its
// own (an awaited child cancelled by someone else), the caller not being
// cancelled. tenacity (retry_if_exception_type(Exception) by default) and
// backoff (on_exception(...) with Exception types) do not retry a
// CancelledError, a BaseException: it propagates. Ours likewise returns it
// at once, unwrapped (README: "a cancellation is never retried"), and the
// caller, never cancelled, goes on.
func TestH49_RetryAttemptsOwnCancellationIsNotRetried(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		attempts := 0
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 5}, func(ct *T, a Attempt) (int, error) {
			attempts++
			child := CreateTask(ct, func(ct *T) (int, error) { return 0, Sleep(ct, time.Second) })
			ct.Loop().CallLater(ms, func() { child.Cancel("child stopped") })
			return child.Await(ct)
		})
		var re *RetryError
		if !IsCancelled(err) || errors.As(err, &re) || attempts != 1 || tk.Cancelling() != 0 || tk.Loop().Time() != ms {
			t.Errorf("Retry = %s after %d attempts at %v, cancelling %d", describe(err), attempts, tk.Loop().Time(), tk.Cancelling())
		}
		if err := Sleep(tk, ms); err != nil {
			t.Errorf("caller's next await: %s", describe(err))
		}
		return nil
	})
}

// ---- aiohappyeyeballs (aio-libs/aiohappyeyeballs, tests/test_staggered.py) ----

// test_one_winners: delay=None, attempts that do not await: only the
// first runs, and wins; excs [None].
func TestH49_HappyEyeballsOneWinner(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var winners []int
		fns := make([]func(*T) (int, error), 4)
		for i := range fns {
			fns[i] = func(*T) (int, error) { winners = append(winners, i); return i, nil }
		}
		v, idx, errs, err := StaggeredRace(tk, Never, fns...)
		if err != nil || v != 0 || idx != 0 || fmt.Sprint(winners) != "[0]" || fmt.Sprint(errs) != "[<nil>]" {
			t.Errorf("StaggeredRace = %d, %d, %v, %s; winners %v", v, idx, errs, describe(err), winners)
		}
		return nil
	})
}

// test_multiple_winners: four attempts, 10µs apart, all awaiting one
// future that a call_soon completes at 0.1 s. aiohappyeyeballs' own
// staggered_race lets all four finish: winners [0, 1, 2, 3], excs
// [None]*4. CPython 3.13's asyncio.staggered.staggered_race (which ours
// is) has the winner cancel the others while their wakeups are queued,
// and a cancel then wins over the wakeup: winners [0], excs [None,
// CancelledError x3] (checked with python3.13). Ours gives CPython's.
func TestH49_HappyEyeballsMultipleWinners(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		finish := NewFuture[struct{}](tk)
		var winners []int
		fns := make([]func(*T) (int, error), 4)
		for i := range fns {
			fns[i] = func(ct *T) (int, error) {
				if _, err := finish.Await(ct); err != nil {
					return 0, err
				}
				winners = append(winners, i)
				return i, nil
			}
		}
		tk.Loop().CallLater(100*ms, func() { tk.Loop().CallSoon(func() { finish.SetResult(struct{}{}) }) })
		v, idx, errs, err := StaggeredRace(tk, 10*time.Microsecond, fns...)
		cancelled := 0
		for _, e := range errs[1:] {
			if IsCancelled(e) {
				cancelled++
			}
		}
		if err != nil || v != 0 || idx != 0 || fmt.Sprint(winners) != "[0]" || len(errs) != 4 || errs[0] != nil || cancelled != 3 {
			t.Errorf("StaggeredRace = %d, %d, %v, %s; winners %v", v, idx, errs, describe(err), winners)
		}
		if tk.Loop().Time() != 100*ms {
			t.Errorf("ended at %v", tk.Loop().Time())
		}
		return nil
	})
}

// StaggeredRace: attempt 0 fails at the very instant its delay runs out
// (its failure and the delay's timer in one iteration, the failure seen
// first). staggered_race starts attempt 1 once (the task waiting for
// attempt 0's failure or the delay starts it whichever comes), and
// attempt 2 only on attempt 1's failure or one delay after attempt 1
// started: CPython 3.13 starts them at 0s, 1s, 2s, 3s (checked with
// python3.13). The failure, already answered by the delay, must not start
// a second attempt at once.
func TestH49_StaggeredFailureAtTheDelayStartsOneAttempt(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		fut := NewFuture[struct{}](tk)
		// Armed before the race's timer: at 1s, attempt 0 resumes (and
		// fails) before the race sees that its delay has passed.
		tk.Loop().CallLater(time.Second, func() { fut.SetResult(struct{}{}) })
		var starts []string
		fns := make([]func(*T) (int, error), 4)
		for i := range fns {
			fns[i] = func(ct *T) (int, error) {
				starts = append(starts, fmt.Sprintf("%d@%v", i, ct.Loop().Time()))
				if i == 0 {
					if _, err := fut.Await(ct); err != nil {
						return 0, err
					}
					return 0, errors.New("fail0")
				}
				if err := Sleep(ct, 10*time.Second); err != nil {
					return 0, err
				}
				return i, nil
			}
		}
		v, idx, _, err := StaggeredRace(tk, time.Second, fns...)
		if err != nil || v != 1 || idx != 1 {
			t.Errorf("StaggeredRace = %d, %d, %s", v, idx, describe(err))
		}
		if got := strings.Join(starts, " "); got != "0@0s 1@1s 2@2s 3@3s" {
			t.Errorf("attempts started %s, want 0@0s 1@1s 2@2s 3@3s", got)
		}
		return nil
	})
}

// ---- hostile angles ----

// A BoundedTaskGroup body that panics while children are queued (at once,
// and after the first two have started): as TaskGroup's body panic (TG-6c
// analogue), every child is cancelled and awaited, the queued ones never
// start, no slot or task is left, and the panic continues out of the call.
func TestH49_BoundedBodyPanicsWithQueuedChildren(t *testing.T) {
	for _, wait := range []bool{false, true} {
		runVirtual(t, func(tk *T) error {
			var started, ended []string
			var bg *BoundedGroup
			v := func() (v any) {
				defer func() { v = recover() }()
				//asynciovet:ignore droppedcancel the body panics; the test checks what the panic left
				_ = BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
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
					if wait {
						if err := Sleep(tk, ms); err != nil {
							return err
						}
					}
					panic("body")
				})
				return nil
			}()
			if v != "body" {
				t.Errorf("wait %v: recovered %v", wait, v)
			}
			var want, wantEnded []string
			if wait {
				want = []string{"0", "1"}
				wantEnded = []string{`0 CancelledError("")`, `1 CancelledError("")`}
			}
			checkLines(t, want, started)
			checkLines(t, wantEnded, ended)
			if bg.Free() != 2 || bg.Queued() != 0 || bg.Running() != 0 || len(AllTasks(tk)) != 1 {
				t.Errorf("wait %v, after: free %d queued %d running %d tasks %d", wait, bg.Free(), bg.Queued(), bg.Running(), len(AllTasks(tk)))
			}
			if err := Sleep(tk, 2*time.Hour); err != nil { // nothing left to run
				return err
			}
			checkLines(t, want, started)
			return nil
		})
	}
}

// Hedge whose every attempt fails at one virtual instant (started at 0,
// 1ms, 2ms, each failing at 5ms): one *ExceptionGroup of the three errors
// in attempt order, at 5ms, no attempt left, no fourth started.
func TestH49_HedgeEveryAttemptFailsAtOneInstant(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var starts []string
		_, err := Hedge(tk, HedgePolicy{MaxAttempts: 3, Delay: ms}, func(ct *T, i int) (int, error) {
			starts = append(starts, fmt.Sprintf("%d@%v", i, ct.Loop().Time()))
			if err := Sleep(ct, 5*ms-ct.Loop().Time()); err != nil {
				return 0, err
			}
			return 0, fmt.Errorf("fail%d", i)
		})
		var eg *ExceptionGroup
		if !errors.As(err, &eg) || fmt.Sprint(eg.Errs) != "[fail0 fail1 fail2]" || tk.Loop().Time() != 5*ms {
			t.Errorf("Hedge = %s at %v", describe(err), tk.Loop().Time())
		}
		if got := strings.Join(starts, " "); got != "0@0s 1@1ms 2@2ms" || len(AllTasks(tk)) != 1 {
			t.Errorf("started %s, %d tasks", got, len(AllTasks(tk)))
		}
		// FirstSuccess and StaggeredRace, every attempt failing at once too.
		_, err = FirstSuccess(tk, func(ct *T) (int, error) { return 0, errors.New("a") },
			func(ct *T) (int, error) { return 0, errors.New("b") })
		if !errors.As(err, &eg) || fmt.Sprint(eg.Errs) != "[a b]" {
			t.Errorf("FirstSuccess = %s", describe(err))
		}
		fail := func(d time.Duration, msg string) func(*T) (int, error) {
			return func(ct *T) (int, error) {
				if err := Sleep(ct, d); err != nil {
					return 0, err
				}
				return 0, errors.New(msg)
			}
		}
		// started at 0 and 1ms, both failing at 7ms
		_, idx, errs, err := StaggeredRace(tk, ms, fail(2*ms, "a"), fail(ms, "b"))
		if err != nil || idx != -1 || fmt.Sprint(errs) != "[a b]" || tk.Loop().Time() != 7*ms {
			t.Errorf("StaggeredRace = %d, %v, %s", idx, errs, describe(err))
		}
		return nil
	})
}

// A heavy waiter (3 of burst 3) granted, then cancelled before it resumed
// (a callback right after the limiter's timer at the same instant), with
// three 1-token waiters behind it: the refund serves all three at that
// instant, in FIFO order, one wakeup each; nothing is lost or doubled.
func TestH49_LimiterHeavyGrantCancelledServesTheLightOnesBehind(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(1, 3)
		if err := lim.AcquireN(tk, 3); err != nil {
			return err
		}
		heavy := startTask(tk, "heavy", func(tk *T) error {
			err := lim.AcquireN(tk, 3)
			r.log("heavy: %v", err)
			return nil
		})
		var light []*Task[struct{}]
		for i := range 3 {
			light = append(light, startTask(tk, fmt.Sprint("l", i), func(tk *T) error {
				if err := lim.Acquire(tk); err != nil {
					return err
				}
				r.log("l%d", i)
				return nil
			}))
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		tk.Loop().CallAt(3*time.Second, func() { heavy.Cancel() })
		awaitAll(tk, append(light, heavy)...)
		st := lim.Stats()
		r.log("granted=%d refunded=%d wakeups=%d tokens=%.0f", st.Granted, st.Refunded, st.Wakeups, lim.Tokens())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"3s heavy: asyncio: cancelled",
		"3s l0", "3s l1", "3s l2",
		"3s granted=4 refunded=1 wakeups=4 tokens=0",
	}, r)
}

// ---- anyio (agronholm/anyio, tests/test_synchronization.py, TestCapacityLimiter) ----

// test_bad_init_value (total_tokens 0 is a ValueError), test_borrow
// (available/borrowed tokens) and test_limit (3 tasks, limit 1, never
// two inside at once): BoundedTaskGroup's limit, Free and Running. (No
// counterpart: set_total_tokens, borrowing twice, releasing unheld.)
func TestH49_AnyioCapacityLimiter(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		v := mustPanic(t, "limit 0", func() {
			//asynciovet:ignore droppedcancel it panics before running anything
			_ = BoundedTaskGroup(tk, 0, func(*BoundedGroup) error { return nil })
		})
		if e, ok := v.(error); !ok || !errors.As(e, new(*ValueError)) {
			t.Errorf("limit 0 panicked with %v", v)
		}
		return BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			if g.Limit() != 2 || g.Free() != 2 || g.Running() != 0 {
				t.Errorf("fresh: %v", g)
			}
			task, err := SpawnBoundedErr(g, func(ct *T) error {
				if g.Free() != 1 || g.Running() != 1 {
					t.Errorf("inside: %v free %d", g, g.Free())
				}
				return nil
			})
			if err != nil {
				return err
			}
			if _, err := task.Await(tk); err != nil {
				return err
			}
			inside, maxInside := 0, 0
			return BoundedTaskGroup(tk, 1, func(g1 *BoundedGroup) error {
				for range 3 {
					for range 5 {
						if _, err := SpawnBoundedErr(g1, func(ct *T) error {
							inside++
							maxInside = max(maxInside, inside)
							defer func() { inside-- }()
							return Sleep(ct, 0)
						}); err != nil {
							return err
						}
					}
				}
				if err := Sleep(tk, ms); err != nil {
					return err
				}
				if maxInside != 1 || g1.Started() != 15 {
					t.Errorf("max inside %d, started %d", maxInside, g1.Started())
				}
				return nil
			})
		})
	})
}

// A Limiter wait inside a Timeout that expires at the very instant the
// token comes, in both orders of the two timers: the waiter gets the
// *TimeoutError and takes nothing (the limiter's timer first: granted,
// then cancelled before it resumed, it gives the token back), and the
// waiter behind it is served at that instant.
func TestH49_LimiterTokenAndTimeoutAtOneInstant(t *testing.T) {
	for _, limiterFirst := range []bool{false, true} {
		r, err := runMain(t, func(tk *T, r *eventLog) error {
			lim := NewLimiter(1, 1)
			if err := lim.Acquire(tk); err != nil {
				return err
			}
			var scope *TimeoutScope
			a := startTask(tk, "a", func(tk *T) error {
				d := time.Second
				if limiterFirst {
					d = Never // rescheduled to 1s once the limiter's timer is armed
				}
				err := Timeout(tk, d, func(s *TimeoutScope) error { scope = s; return lim.Acquire(tk) })
				r.log("a: %s", describe(err))
				return nil
			})
			b := startTask(tk, "b", func(tk *T) error {
				if err := lim.Acquire(tk); err != nil {
					return err
				}
				r.log("b")
				return nil
			})
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			if limiterFirst {
				if err := scope.Reschedule(time.Second); err != nil {
					return err
				}
			}
			awaitAll(tk, a, b)
			st := lim.Stats()
			r.log("granted=%d refunded=%d tokens=%.0f", st.Granted, st.Refunded, lim.Tokens())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		refunded := 0
		if limiterFirst {
			refunded = 1
		}
		got := r.snapshot()
		if len(got) != 3 || !strings.HasPrefix(got[0], "1s a: TimeoutError") || got[1] != "1s b" ||
			got[2] != fmt.Sprintf("1s granted=2 refunded=%d tokens=0", refunded) {
			t.Errorf("limiter first %v: %q", limiterFirst, got)
		}
	}
}

// tenacity's stop_before_delay(1) with a fixed wait of 0.25 s (stop when
// seconds_since_start + upcoming_sleep >= max_delay): attempts at 0,
// 0.25, 0.5, 0.75, then it stops at 0.75 s without sleeping, since the
// next would start at 1 s, exactly the delay. MaxElapsed is that rule
// ("no attempt starts at or after it"); a full jitter of x = 0.5 of a
// constant 500ms cap (Multiplier 1) is the fixed wait. tenacity's older
// stop_after_delay (stop when seconds_since_start >= max_delay, after
// the attempt) would sleep once more and make a fifth attempt at 1 s;
// backoff's max_time likewise checks only the time already elapsed (and
// cuts the last wait to the time left), so it also tries at 1 s.
func TestH49_TenacityStopBeforeDelay(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var starts []time.Duration
		_, err := Retry(tk, RetryPolicy{MaxElapsed: time.Second, Initial: 500 * ms, Multiplier: 1,
			Rand: RandFunc(func() float64 { return 0.5 }),
		}, func(ct *T, a Attempt) (int, error) {
			starts = append(starts, ct.Loop().Time())
			return 0, errors.New("x")
		})
		var re *RetryError
		if !errors.As(err, &re) || re.Reason != "max elapsed" || re.Attempts != 4 || tk.Loop().Time() != 750*ms ||
			fmt.Sprint(starts) != "[0s 250ms 500ms 750ms]" {
			t.Errorf("Retry = %s at %v, starts %v", describe(err), tk.Loop().Time(), starts)
		}
		return nil
	})
}

// test_multiple_winners_eager_task_factory: the same race on a loop whose
// tasks start eagerly (python3.13.0's staggered_race fails its own
// assertion there, `len(running_tasks) == this_index + 2`; later releases
// reworked it): the same outcome as on a plain loop, CPython's (see
// TestH49_HappyEyeballsMultipleWinners).
func TestH49_HappyEyeballsMultipleWinnersEager(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithEagerTasks())
	defer mustClose(t, l)
	main := CreateTask(l, func(tk *T) (string, error) {
		finish := NewFuture[struct{}](tk)
		var winners []int
		fns := make([]func(*T) (int, error), 4)
		for i := range fns {
			fns[i] = func(ct *T) (int, error) {
				if _, err := finish.Await(ct); err != nil {
					return 0, err
				}
				winners = append(winners, i)
				return i, nil
			}
		}
		tk.Loop().CallLater(100*ms, func() { tk.Loop().CallSoon(func() { finish.SetResult(struct{}{}) }) })
		v, idx, errs, err := StaggeredRace(tk, 10*time.Microsecond, fns...)
		kinds := make([]string, len(errs))
		for i, e := range errs {
			kinds[i] = fmt.Sprint(IsCancelled(e), e == nil)
		}
		return fmt.Sprint(v, idx, winners, kinds, err, tk.Loop().Time()), nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	got, _ := main.Result()
	if want := "0 0 [0] [false true true false true false true false] <nil> 100ms"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
