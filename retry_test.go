package asyncio

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var errFlaky = errors.New("flaky")

// constRand is a jitter source that always returns x.
func constRand(x float64) JitterSource { return RandFunc(func() float64 { return x }) }

// Exponential backoff with full jitter: with the source at 0.5 the waits
// are half the caps 100, 200, 400 (capped at Max 300) ms; each attempt sees
// its number and the previous error.
func TestRetry_BackoffAndAttempts(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v, err := Retry(tk, RetryPolicy{MaxAttempts: 5, Initial: 100 * ms, Max: 300 * ms, Rand: constRand(0.5)},
			func(tk *T, a Attempt) (string, error) {
				r.log("attempt %d last=%v delay=%v", a.N, a.LastErr, a.Delay)
				if a.N < 4 {
					return "", errFlaky
				}
				return "ok", nil
			})
		r.log("%q %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 1 last=<nil> delay=0s",
		"50ms attempt 2 last=flaky delay=50ms",
		"150ms attempt 3 last=flaky delay=100ms",
		"300ms attempt 4 last=flaky delay=150ms",
		`300ms "ok" <nil>`,
	}, r)
}

// MaxAttempts exhausted: a *RetryError wrapping the last error, matching
// ErrRetriesExhausted and the last error.
func TestRetry_MaxAttempts(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		n := 0
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 3, Rand: constRand(0)}, func(tk *T, a Attempt) (int, error) {
			n++
			return 0, errFlaky
		})
		var re *RetryError
		if !errors.As(err, &re) || re.Attempts != 3 || re.Reason != "max attempts" ||
			!errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, errFlaky) || n != 3 {
			t.Errorf("err %v (n=%d)", err, n)
		}
		return nil
	})
}

// A non-retryable error is returned as it is, at once.
func TestRetry_Classifier(t *testing.T) {
	fatal := errors.New("fatal")
	runVirtual(t, func(tk *T) error {
		n := 0
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 10, Retryable: func(err error) bool { return !errors.Is(err, fatal) }},
			func(tk *T, a Attempt) (int, error) {
				n++
				if n == 2 {
					return 0, fatal
				}
				return 0, errFlaky
			})
		if err != fatal || n != 2 {
			t.Errorf("err %v n=%d", err, n)
		}
		return nil
	})
}

// A cancellation is never retried: returned by the attempt, or arriving
// during the backoff, it comes back at once — even with a classifier that
// says yes to everything.
func TestRetry_CancellationNeverRetried(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		n := 0
		_, err := Retry(tk, RetryPolicy{MaxAttempts: 10, Retryable: func(error) bool { return true }},
			func(tk *T, a Attempt) (int, error) {
				n++
				return 0, &CancelledError{Msg: "inner"}
			})
		r.log("returned: %v n=%d", err, n)
		tk.Loop().CallLater(150*ms, func() { tk.Cancel("stop") })
		_, err = Retry(tk, RetryPolicy{MaxAttempts: 10, Initial: time.Second, Rand: constRand(0.5)},
			func(tk *T, a Attempt) (int, error) {
				r.log("attempt %d", a.N)
				return 0, errFlaky
			})
		r.log("backoff: %v", err)
		tk.Uncancel()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s returned: asyncio: cancelled: inner n=1",
		"0s attempt 1",
		"150ms backoff: asyncio: cancelled: stop",
	}, r)
}

// An attempt that catches the CancelledError of a request made while it
// ran and fails with another error is not retried: the request would be
// lost (it is delivered once). Retry returns a cancellation whose Cause is
// the attempt's error; a request withdrawn by the attempt (Uncancel)
// does not stop the retries.
func TestRetry_SwallowedCancellationStopsRetries(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		pol := RetryPolicy{MaxAttempts: 5, Initial: 100 * ms, Rand: constRand(0.5)}
		tk.Loop().CallLater(10*ms, func() { tk.Cancel("stop") })
		_, err := Retry(tk, pol, func(tk *T, a Attempt) (int, error) {
			r.log("attempt %d", a.N)
			if err := Sleep(tk, time.Second); err != nil {
				return 0, errors.New("wrapped badly: " + err.Error()) // the cancellation dropped
			}
			return 0, errFlaky
		})
		r.log("returned: %v cancelled=%v cause-kept=%v", err, IsCancelled(err), strings.Contains(errors.Unwrap(err).Error(), "wrapped badly"))
		tk.Uncancel()
		tk.Loop().CallLater(10*ms, func() { tk.Cancel("withdrawn") })
		_, err = Retry(tk, pol, func(tk *T, a Attempt) (int, error) {
			r.log("attempt %d", a.N)
			if a.N == 1 {
				if err := Sleep(tk, time.Second); err != nil {
					tk.Uncancel() // the attempt withdraws the request
					return 0, errFlaky
				}
			}
			return a.N, nil
		})
		r.log("second: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 1",
		"10ms returned: asyncio: cancelled: Retry: the task was cancelled during attempt 1 cancelled=true cause-kept=true",
		"10ms attempt 1",
		"70ms attempt 2",
		"70ms second: <nil>",
	}, r)
}

// MaxElapsed: no attempt starts at or after the overall deadline.
func TestRetry_MaxElapsed(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		_, err := Retry(tk, RetryPolicy{MaxElapsed: 700 * ms, Initial: 200 * ms, Multiplier: 2, Rand: constRand(0.999999)},
			func(tk *T, a Attempt) (int, error) {
				r.log("attempt %d", a.N)
				return 0, errFlaky
			})
		r.log("%v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 1",
		"199.9998ms attempt 2",
		"599.9994ms attempt 3",
		"599.9994ms asyncio: retries exhausted (max elapsed) after 3 attempts: flaky",
	}, r)
}

// An enclosing Timeout: Retry stops before an attempt that would start at
// or after its deadline, returning the last error at once instead of
// sleeping into the timeout.
func TestRetry_EnclosingTimeout(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := Timeout(tk, 250*ms, func(s *TimeoutScope) error {
			return Timeout(tk, time.Hour, func(*TimeoutScope) error {
				dl, ok := Deadline(tk)
				r.log("deadline %v %v", dl, ok)
				_, err := Retry(tk, RetryPolicy{MaxAttempts: 100, Initial: 100 * ms, Rand: constRand(0.5)},
					func(tk *T, a Attempt) (int, error) {
						r.log("attempt %d", a.N)
						return 0, errFlaky
					})
				return err
			})
		})
		r.log("%v", err)
		_, ok := Deadline(tk)
		r.log("outside: %v", ok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s deadline 250ms true",
		"0s attempt 1",
		"50ms attempt 2",
		"150ms attempt 3",
		"150ms asyncio: retries exhausted (enclosing timeout) after 3 attempts: flaky",
		"150ms outside: false",
	}, r)
}

// A RetryError stopped by an enclosing Timeout matches ErrTimeout and
// context.DeadlineExceeded (the caller's time ran out, as the Timeout would
// have said a little later); stopped by its own rules, it does not.
func TestRetry_EnclosingTimeoutErrorIsATimeout(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		policy := RetryPolicy{MaxAttempts: 3, Initial: 100 * ms, Rand: constRand(0.5)}
		fail := func(*T, Attempt) (int, error) { return 0, errFlaky }
		var byTimeout error
		if err := Timeout(tk, 120*ms, func(*TimeoutScope) error {
			_, byTimeout = Retry(tk, policy, fail)
			return nil
		}); err != nil {
			return err
		}
		_, byAttempts := Retry(tk, policy, fail)
		for _, c := range []struct {
			name string
			err  error
			want bool
		}{{"enclosing timeout", byTimeout, true}, {"max attempts", byAttempts, false}} {
			var re *RetryError
			if !errors.As(c.err, &re) || re.Reason != c.name {
				t.Fatalf("%s: got %v", c.name, c.err)
			}
			if !errors.Is(c.err, ErrRetriesExhausted) || !errors.Is(c.err, errFlaky) {
				t.Errorf("%s: %v does not match ErrRetriesExhausted and the last error", c.name, c.err)
			}
			if got := errors.Is(c.err, ErrTimeout); got != c.want {
				t.Errorf("%s: errors.Is(err, ErrTimeout) = %v, want %v", c.name, got, c.want)
			}
			if got := errors.Is(c.err, context.DeadlineExceeded); got != c.want {
				t.Errorf("%s: errors.Is(err, context.DeadlineExceeded) = %v, want %v", c.name, got, c.want)
			}
		}
		return nil
	})
}

// Deterministic with a seeded *rand.Rand: two runs, the same schedule.
func TestRetry_SeededDeterministic(t *testing.T) {
	schedule := func() []time.Duration {
		var at []time.Duration
		runVirtual(t, func(tk *T) error {
			//asynciovet:ignore droppedcancel the attempts always fail and nothing cancels this task; the schedule is what the test checks
			_, _ = Retry(tk, RetryPolicy{MaxAttempts: 6, Rand: rand.New(rand.NewPCG(1, 2))},
				func(tk *T, a Attempt) (int, error) {
					at = append(at, tk.Loop().Time())
					return 0, errFlaky
				})
			return nil
		})
		return at
	}
	a, b := schedule(), schedule()
	if len(a) != 6 || !equalDurations(a, b) {
		t.Errorf("schedules differ: %v vs %v", a, b)
	}
	for i := 1; i < len(a); i++ {
		if d := a[i] - a[i-1]; d < 0 || d >= 100*ms<<(i-1) {
			t.Errorf("wait %d = %v, want in [0, %v)", i, d, 100*ms<<(i-1))
		}
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Bad policies: a *ValueError naming the field, before the first attempt.
func TestRetry_BadPolicy(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ran := false
		fn := func(tk *T, a Attempt) (int, error) { ran = true; return 0, nil }
		for _, c := range []struct {
			p    RetryPolicy
			word string
		}{
			{RetryPolicy{}, "no stopping rule"},
			{RetryPolicy{MaxAttempts: -1}, "MaxAttempts"},
			{RetryPolicy{MaxElapsed: -ms}, "MaxElapsed"},
			{RetryPolicy{MaxAttempts: 1, Initial: -ms}, "Initial"},
			{RetryPolicy{MaxAttempts: 1, Max: -ms}, "Max"},
			{RetryPolicy{MaxAttempts: 1, Multiplier: 0.5}, "Multiplier"},
		} {
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			v := mustPanic(t, c.word, func() { _, _ = Retry(tk, c.p, fn) })
			var ve *ValueError
			if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, c.word) {
				t.Errorf("%+v: panic %v, want a *ValueError naming %s", c.p, v, c.word)
			}
		}
		if ran {
			t.Error("an attempt ran")
		}
		return nil
	})
}

// Deadline: the earliest active scope's deadline; an expiring scope counts
// as now; none outside a scope.
func TestDeadline(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		_, ok := Deadline(tk)
		r.log("none: %v", !ok)
		err := Timeout(tk, time.Second, func(outer *TimeoutScope) error {
			return Timeout(tk, 2*time.Second, func(inner *TimeoutScope) error {
				d, _ := Deadline(tk)
				r.log("nested: %v", d)
				if err := inner.Reschedule(500 * ms); err != nil {
					return err
				}
				d, _ = Deadline(tk)
				r.log("rescheduled: %v", d)
				err := Sleep(tk, time.Hour)
				d, _ = Deadline(tk)
				r.log("expiring: %v %v", d, IsCancelled(err))
				return err
			})
		})
		r.log("%v", describe(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s none: true",
		"0s nested: 1s",
		"0s rescheduled: 500ms",
		"500ms expiring: 500ms true",
		"500ms " + describe(&TimeoutError{Cause: &CancelledError{}}),
	}, r)
}

// A jitter source outside [0, 1) is clamped: 7 waits the whole cap, -5
// and NaN wait nothing.
func TestRetry_BadJitterSourceClamped(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want time.Duration
	}{{7, 100*ms - 1}, {-5, 0}, {math.NaN(), 0}} {
		runVirtual(t, func(tk *T) error {
			var waits []time.Duration
			_, err := Retry(tk, RetryPolicy{MaxAttempts: 2, Initial: 100 * ms, Rand: constRand(c.x)},
				func(tk *T, a Attempt) (int, error) {
					waits = append(waits, a.Delay)
					return 0, errFlaky
				})
			if !errors.Is(err, ErrRetriesExhausted) || len(waits) != 2 || waits[1] != c.want {
				t.Errorf("source %v: waits %v, err %v", c.x, waits, err)
			}
			return nil
		})
	}
}
