package asyncio

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Deadline returns the earliest deadline of the Timeout and TimeoutAt
// scopes that enclose t's current code, on the loop's clock, and whether
// there is one. A scope whose deadline has passed already counts as
// expiring now.
func Deadline(t *T) (time.Duration, bool) {
	t.checkCaller("Deadline")
	when := Never
	for s := t.timeout; s != nil; s = s.outer {
		switch s.state {
		case tmoActive:
			when = min(when, s.when)
		case tmoExpiring:
			when = min(when, t.Loop().Time())
		}
	}
	return when, when != Never
}

// JitterSource gives Retry its random numbers: Float64 returns a number in
// [0, 1). A *rand.Rand of math/rand or math/rand/v2 is one; RandFunc
// adapts a function.
type JitterSource interface{ Float64() float64 }

// RandFunc adapts a function to a JitterSource.
type RandFunc func() float64

// Float64 calls f.
func (f RandFunc) Float64() float64 { return f() }

// RetryPolicy says how Retry retries. At least one stopping rule,
// MaxAttempts or MaxElapsed, must be set.
type RetryPolicy struct {
	// MaxAttempts is the most attempts made (the first one included);
	// 0 means no limit.
	MaxAttempts int
	// MaxElapsed is the overall deadline, measured on the loop's clock
	// from the call: no attempt starts at or after it; 0 means none.
	MaxElapsed time.Duration
	// Initial is the backoff cap before the second attempt (default
	// 100ms); attempt n+1 waits a random duration in [0, cap_n) with
	// cap_n = min(Max, Initial * Multiplier^(n-1)) ("full jitter").
	Initial time.Duration
	// Max caps the backoff (default: no cap).
	Max time.Duration
	// Multiplier is the backoff growth factor (default 2; must be >= 1).
	Multiplier float64
	// Retryable says which errors are retried (default: every error).
	// A cancellation is never retried, whatever it says.
	Retryable func(error) bool
	// Rand is the jitter source (default: math/rand/v2's global
	// generator). Give a seeded one for deterministic backoff.
	Rand JitterSource
}

// Attempt is what Retry tells each attempt.
type Attempt struct {
	// N is the attempt number, 1 for the first.
	N int
	// LastErr is the previous attempt's error (nil for the first).
	LastErr error
	// Delay is the backoff slept before this attempt (0 for the first).
	Delay time.Duration
}

// RetryError is what Retry returns when it stops retrying because a
// stopping rule ran out: MaxAttempts, MaxElapsed, or the deadline of an
// enclosing Timeout before which the next attempt could not start. It
// wraps the last attempt's error (errors.Is and errors.As see it) and
// matches ErrRetriesExhausted. Stopped by an enclosing Timeout, it also
// matches ErrTimeout and context.DeadlineExceeded, as the Timeout's own
// error would: the caller's time ran out, only earlier than the Timeout
// could say so, and code ported from asyncio that catches TimeoutError
// around a retry loop (which sleeps into the timeout) must still see it.
type RetryError struct {
	// Attempts is the number of attempts made.
	Attempts int
	// Last is the last attempt's error.
	Last error
	// Reason says which rule stopped: "max attempts", "max elapsed" or
	// "enclosing timeout".
	Reason string
}

// Error implements the error interface.
func (e *RetryError) Error() string {
	return fmt.Sprintf("asyncio: retries exhausted (%s) after %d attempts: %v", e.Reason, e.Attempts, e.Last)
}

// Unwrap returns the last attempt's error.
func (e *RetryError) Unwrap() error { return e.Last }

// Is reports that every RetryError matches ErrRetriesExhausted, and one
// stopped by an enclosing Timeout matches ErrTimeout and
// context.DeadlineExceeded too.
func (e *RetryError) Is(target error) bool {
	if target == ErrRetriesExhausted {
		return true
	}
	return e.Reason == reasonEnclosingTimeout && (target == ErrTimeout || target == context.DeadlineExceeded)
}

// reasonEnclosingTimeout is RetryError.Reason when an enclosing Timeout's
// deadline stopped the retries.
const reasonEnclosingTimeout = "enclosing timeout"

func (p *RetryPolicy) validate() {
	switch {
	case p.MaxAttempts < 0:
		panic(valueErrorf("RetryPolicy: MaxAttempts must be >= 0, got %d", p.MaxAttempts))
	case p.MaxElapsed < 0:
		panic(valueErrorf("RetryPolicy: MaxElapsed must be >= 0, got %v", p.MaxElapsed))
	case p.MaxAttempts == 0 && p.MaxElapsed == 0:
		panic(valueErrorf("RetryPolicy: no stopping rule (MaxAttempts and MaxElapsed are both 0)"))
	case p.Initial < 0:
		panic(valueErrorf("RetryPolicy: Initial must be >= 0, got %v", p.Initial))
	case p.Max < 0:
		panic(valueErrorf("RetryPolicy: Max must be >= 0, got %v", p.Max))
	case p.Multiplier != 0 && !(p.Multiplier >= 1) || math.IsInf(p.Multiplier, 0):
		panic(valueErrorf("RetryPolicy: Multiplier must be a finite number >= 1, got %v", p.Multiplier))
	}
}

// backoffCap is cap_n for the wait after attempt n.
func (p *RetryPolicy) backoffCap(n int) time.Duration {
	initial := p.Initial
	if initial == 0 {
		initial = 100 * time.Millisecond
	}
	mult := p.Multiplier
	if mult == 0 {
		mult = 2
	}
	c := float64(initial) * math.Pow(mult, float64(n-1))
	if p.Max > 0 && c > float64(p.Max) {
		c = float64(p.Max)
	}
	if c >= float64(Never) {
		return Never
	}
	return time.Duration(c)
}

// Retry runs fn in t until it succeeds or the policy stops it, sleeping
// a full-jitter exponential backoff between attempts (what tenacity,
// backoff and hand-written asyncio loops do):
//
//   - an error for which Retryable is false is returned as it is, at once;
//   - a cancellation — fn returning one, or t cancelled during a backoff —
//     is never retried: it is returned at once. So is an attempt that
//     failed after t was asked to cancel while it ran, even if fn caught
//     the CancelledError and returned another error: Retry returns a
//     *CancelledError whose Cause is that error, since retrying would
//     lose the request (the cancellation is delivered only once); if the
//     request was not delivered yet (fn's last await returned an outcome
//     from outside the loop that won over it), that *CancelledError is
//     its delivery, with its message, and t's next await does not get it
//     again;
//   - when MaxAttempts is reached, or the next attempt would start at or
//     after MaxElapsed or the deadline of a Timeout enclosing the call
//     (see Deadline), Retry returns a *RetryError wrapping the last error
//     without sleeping any further (one stopped by the Timeout's deadline
//     also matches ErrTimeout).
//
// fn receives the attempt number and the previous error. A policy with no
// stopping rule, or with a negative field or a Multiplier below 1, is a
// programming error: Retry panics with a *ValueError naming it before the
// first attempt; so it does, with a *RuntimeError, when t is not the
// running task.
func Retry[V any](t *T, p RetryPolicy, fn func(t *T, a Attempt) (V, error)) (V, error) {
	// checkRunning, not just checkCaller: with a t that is not running,
	// an attempt would run (and succeed unnoticed, or panic only at the
	// backoff's Sleep, after its effects).
	t.checkRunning("Retry")
	p.validate()
	if fn == nil {
		panic(valueErrorf("Retry: nil coroutine function"))
	}
	src := p.Rand
	if src == nil {
		src = RandFunc(rand.Float64)
	}
	loop := t.Loop()
	stop := Never
	if p.MaxElapsed > 0 {
		stop = addSaturating(loop.Time(), p.MaxElapsed)
	}
	var zero V
	a := Attempt{N: 1}
	for {
		requests := t.Cancelling()
		v, err := fn(t, a)
		if err == nil {
			return v, nil
		}
		if IsCancelled(err) || (p.Retryable != nil && !p.Retryable(err)) {
			return zero, err
		}
		if t.Cancelling() > requests {
			// fn swallowed a cancellation (or was asked to cancel just as
			// it failed): stop, as for a cancellation.
			msg := "Retry: the task was cancelled during attempt " + strconv.Itoa(a.N)
			// Not delivered yet (an outcome from outside the loop won
			// over it, cancel.go): this error is its delivery, so the next
			// await must not deliver it a second time.
			if m, ok := t.takePendingCancel(); ok && m != "" {
				msg = m
			}
			return zero, &CancelledError{Msg: msg, Cause: err}
		}
		if p.MaxAttempts > 0 && a.N >= p.MaxAttempts {
			return zero, &RetryError{Attempts: a.N, Last: err, Reason: "max attempts"}
		}
		x := src.Float64()
		if !(x >= 0) || x >= 1 { // a source out of [0, 1): clamp, NaN to 0
			x = min(max(x, 0), math.Nextafter(1, 0))
			if x != x {
				x = 0
			}
		}
		d := time.Duration(x * float64(p.backoffCap(a.N)))
		start := addSaturating(loop.Time(), d)
		if p.MaxElapsed > 0 && start >= stop {
			return zero, &RetryError{Attempts: a.N, Last: err, Reason: "max elapsed"}
		}
		if dl, ok := Deadline(t); ok && start >= dl {
			return zero, &RetryError{Attempts: a.N, Last: err, Reason: reasonEnclosingTimeout}
		}
		if serr := Sleep(t, d); serr != nil {
			return zero, serr
		}
		a = Attempt{N: a.N + 1, LastErr: err, Delay: d}
	}
}
