package asyncio

import (
	"strconv"
	"time"
)

// timeoutState mirrors asyncio.timeouts._State; the names are the repr
// words of TMO-2.
type timeoutState int

const (
	tmoCreated timeoutState = iota
	tmoActive
	tmoExpiring
	tmoExpired
	tmoFinished
)

func (s timeoutState) String() string {
	switch s {
	case tmoCreated:
		return "created"
	case tmoActive:
		return "active"
	case tmoExpiring:
		return "expiring"
	case tmoExpired:
		return "expired"
	default:
		return "finished"
	}
}

// TimeoutScope is asyncio.Timeout, the object bound by
// "async with asyncio.timeout(d) as s". It is handed to the body of Timeout
// and TimeoutAt and must only be used from the task running that body.
type TimeoutScope struct {
	state     timeoutState
	when      time.Duration // Never = no deadline
	loop      *Loop
	task      *T
	handle    interface{ Cancel() }
	cancelled int           // task.Cancelling() at entry (TMO-3)
	outer     *TimeoutScope // the task's enclosing active scope, if any
}

// Timeout runs body under a deadline d from now (asyncio.timeout(d)). The
// deadline is computed when Timeout is called (TMO-1); d == Never means no
// deadline. When the deadline passes the task is cancelled (TMO-4), and if
// that cancellation is what escapes body, Timeout returns a *TimeoutError
// instead (TMO-6). Any other outcome of body is returned unchanged: the
// scope never suppresses an error.
//
// Unlike Python 3.13 (TMO-7), no TimeoutError is spliced into a different
// error escaping an expired scope: Go errors have no implicit context chain,
// so that error is returned as it is (Expired tells what happened).
//
// t must be the running task (the scope cancels it); otherwise Timeout
// returns the *RuntimeError "Timeout should be used inside a task" without
// running body.
func Timeout(t *T, d time.Duration, body func(s *TimeoutScope) error) error {
	t.checkCaller("Timeout")
	when := Never
	if d != Never {
		when = addSaturating(t.Loop().Time(), d)
	}
	return TimeoutAt(t, when, body)
}

// TimeoutAt is Timeout with an absolute deadline on the loop's clock
// (asyncio.timeout_at(when)); when == Never means no deadline.
func TimeoutAt(t *T, when time.Duration, body func(s *TimeoutScope) error) (err error) {
	t.checkCaller("Timeout")
	if body == nil {
		panic(valueErrorf("Timeout: nil body"))
	}
	s := &TimeoutScope{when: when, loop: t.Loop()}
	if err := s.enter(t); err != nil {
		return err
	}
	// A panic is an exception too: the timer must not outlive the scope,
	// and an expiry must be uncancelled, before it unwinds further.
	panicking := true
	defer func() {
		if panicking {
			s.exit(nil)
		}
	}()
	err = body(s)
	panicking = false
	return s.exit(err)
}

// enter is Timeout.__aenter__ (TMO-3).
func (s *TimeoutScope) enter(t *T) error {
	if s.state != tmoCreated {
		return &RuntimeError{Msg: "Timeout has already been entered"}
	}
	if t == nil || CurrentTask(s.loop) != t {
		return &RuntimeError{Msg: "Timeout should be used inside a task"}
	}
	s.state = tmoActive
	s.task = t
	s.cancelled = t.Cancelling()
	s.outer, t.timeout = t.timeout, s
	return s.Reschedule(s.when)
}

// exit is Timeout.__aexit__ (TMO-6). escaping is what the body returned.
func (s *TimeoutScope) exit(escaping error) error {
	if s.task != nil && s.task.timeout == s {
		s.task.timeout = s.outer
	}
	if s.handle != nil {
		s.handle.Cancel()
		s.handle = nil
	}
	switch s.state {
	case tmoExpiring:
		s.state = tmoExpired
		// 3.12+: convert only if no cancellation newer than our entry is
		// outstanding, and only a cancellation (TMO-6, TMO-8 g, j).
		if s.task.Uncancel() <= s.cancelled && IsCancelled(escaping) {
			return &TimeoutError{Cause: escaping}
		}
	case tmoActive:
		s.state = tmoFinished
	}
	return escaping
}

// onTimeout is Timeout._on_timeout (TMO-4).
func (s *TimeoutScope) onTimeout() {
	s.task.Cancel()
	s.state = tmoExpiring
	s.handle = nil
}

// Reschedule moves the deadline to the absolute loop time when (Never: no
// deadline) — asyncio.Timeout.reschedule (TMO-5). It is allowed only while
// the scope is active; otherwise it returns a *RuntimeError "Cannot change
// state of <expiring|expired|finished> Timeout". A deadline not after now
// fires in the next iteration.
func (s *TimeoutScope) Reschedule(when time.Duration) error {
	if s.state != tmoActive {
		if s.state == tmoCreated {
			return &RuntimeError{Msg: "Timeout has not been entered"}
		}
		return &RuntimeError{Msg: "Cannot change state of " + s.state.String() + " Timeout"}
	}
	s.when = when
	if s.handle != nil {
		s.handle.Cancel()
	}
	switch {
	case when == Never:
		s.handle = nil
	case when <= s.loop.Time():
		s.handle = s.loop.CallSoon(s.onTimeout)
	default:
		s.handle = s.loop.CallAt(when, s.onTimeout)
	}
	return nil
}

// When returns the current deadline, Never if there is none
// (asyncio.Timeout.when).
func (s *TimeoutScope) When() time.Duration { return s.when }

// Expired reports whether the deadline fired during the scope
// (asyncio.Timeout.expired): true from the firing on, also after exit.
func (s *TimeoutScope) Expired() bool { return s.state == tmoExpiring || s.state == tmoExpired }

// String is asyncio's repr (TMO-2): "<Timeout [active] when=1.5>" (seconds,
// rounded to 3 places; "None" without a deadline), "<Timeout [expired]>",
// "<Timeout [finished]>".
func (s *TimeoutScope) String() string {
	if s.state != tmoActive {
		return "<Timeout [" + s.state.String() + "]>"
	}
	w := "None"
	if s.when != Never {
		w = pySeconds(s.when)
	}
	return "<Timeout [active] when=" + w + ">"
}

// pySeconds formats d like Python's str(round(seconds, 3)): "1.5", "2.0".
func pySeconds(d time.Duration) string {
	// round(x, 3) rounds the exact binary value, as FormatFloat does
	// (multiplying by 1000 first rounds once more, which moved 1.0005,
	// stored as 1.000499..., up); the shortest repr of the result is then
	// what Python prints.
	sec, _ := strconv.ParseFloat(strconv.FormatFloat(d.Seconds(), 'f', 3, 64), 64)
	s := strconv.FormatFloat(sec, 'f', -1, 64)
	for _, c := range s {
		if c == '.' {
			return s
		}
	}
	return s + ".0"
}

// addSaturating returns a+b clamped to Never, so "now + huge delay" is no
// deadline rather than an overflow into the past.
func addSaturating(a, b time.Duration) time.Duration {
	if b > 0 && a > Never-b {
		return Never
	}
	return a + b
}

// WaitFor awaits aw with a timeout (asyncio.wait_for, 3.12+ semantics).
//
//   - d == Never: a plain await.
//   - d <= 0 (WAITFOR-1): if aw is already done its outcome is returned;
//     otherwise aw is cancelled and awaited, and its value is returned if it
//     swallowed the cancellation, else a *TimeoutError caused by its
//     CancelledError.
//   - otherwise it is Timeout(t, d, ...) around aw.Await(t): on expiry aw is
//     cancelled (through the task's cancellation of what it awaits) and
//     awaited before the *TimeoutError is returned (WAITFOR-3), and
//     cancelling t cancels aw and returns the CancelledError (WAITFOR-4).
func WaitFor[V any](t *T, d time.Duration, aw AwaitableOf[V]) (V, error) {
	t.checkCaller("WaitFor")
	coreOf(aw, "WaitFor")
	if d != Never && d <= 0 {
		t.checkRunning("WaitFor") // before aw is cancelled (Timeout checks the rest)
		return waitForExpired(t, aw)
	}
	var v V
	err := Timeout(t, d, func(*TimeoutScope) error {
		var err error
		v, err = aw.Await(t)
		return err
	})
	return v, err
}

// WaitForFunc is wait_for(coro, d) in 3.12+: fn runs inside the calling task
// t (no new task, WAITFOR-2) under Timeout(t, d). With d <= 0 (and not
// Never) fn is wrapped in a task that is cancelled before it starts, so fn
// never runs and the result is a *TimeoutError (WAITFOR-1). On a loop
// WithEagerTasks that task starts eagerly, as under asyncio's
// eager_task_factory: fn runs until it first suspends, and if it finished
// there its outcome is returned.
func WaitForFunc[V any](t *T, d time.Duration, fn func(*T) (V, error)) (V, error) {
	t.checkCaller("WaitForFunc")
	if fn == nil {
		panic(valueErrorf("WaitForFunc: nil coroutine function"))
	}
	if d != Never && d <= 0 {
		t.checkRunning("WaitForFunc") // before the task is created (Timeout checks the rest)
		return waitForExpired[V](t, CreateTask(t, fn))
	}
	var v V
	err := Timeout(t, d, func(*TimeoutScope) error {
		var err error
		v, err = fn(t)
		return err
	})
	return v, err
}

// waitForExpired is the timeout <= 0 branch of wait_for.
func waitForExpired[V any](t *T, aw AwaitableOf[V]) (V, error) {
	if aw.Done() {
		return aw.Result()
	}
	if err := cancelAndWait(t, aw); err != nil {
		var zero V
		return zero, err
	}
	v, err := aw.Result()
	if IsCancelled(err) {
		return v, &TimeoutError{Cause: err}
	}
	return v, err
}
