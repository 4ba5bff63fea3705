package asyncio

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// hedgeErrorMessage is the message of the ExceptionGroup Hedge and
// FirstSuccess return when every attempt failed.
const hedgeErrorMessage = "all attempts failed"

// LatencyWindow keeps the latencies of the last N successful attempts for
// a HedgePolicy that hedges after a percentile. Create it with
// NewLatencyWindow; like every primitive here it is used from one loop.
type LatencyWindow struct {
	buf  []time.Duration
	next int
	full bool
}

// NewLatencyWindow returns a window of the last n latencies. An n <= 0
// panics with a *ValueError.
func NewLatencyWindow(n int) *LatencyWindow {
	if n <= 0 {
		panic(valueErrorf("NewLatencyWindow: size must be > 0, got %d", n))
	}
	return &LatencyWindow{buf: make([]time.Duration, 0, n)}
}

// Add records one latency.
func (w *LatencyWindow) Add(d time.Duration) {
	if cap(w.buf) == 0 {
		panic(valueErrorf("LatencyWindow.Add: zero LatencyWindow has size 0 (make it with NewLatencyWindow(n))"))
	}
	if !w.full && len(w.buf) < cap(w.buf) {
		w.buf = append(w.buf, d)
		if len(w.buf) == cap(w.buf) {
			w.full = true
		}
		return
	}
	w.buf[w.next] = d
	w.next = (w.next + 1) % len(w.buf)
}

// Len returns the number of latencies held.
func (w *LatencyWindow) Len() int { return len(w.buf) }

// Percentile returns the p-th percentile (0 < p <= 100, nearest rank) of
// the latencies held, and false when there are none. A p outside (0, 100]
// (or NaN) panics with a *ValueError naming it.
func (w *LatencyWindow) Percentile(p float64) (time.Duration, bool) {
	if !(p > 0 && p <= 100) {
		panic(valueErrorf("LatencyWindow.Percentile: p must be in (0, 100], got %v", p))
	}
	if len(w.buf) == 0 {
		return 0, false
	}
	s := slices.Clone(w.buf)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1], true
}

// HedgePolicy says when Hedge starts its extra attempts.
type HedgePolicy struct {
	// MaxAttempts is the most attempts started, the first included
	// (default 2).
	MaxAttempts int
	// Delay is how long after the latest attempt started the next one
	// starts if none has succeeded yet (Never: only a failure starts
	// it). With Percentile set it is the delay used until Window holds
	// MinSamples latencies.
	Delay time.Duration
	// Percentile, when > 0, takes the delay from Window: the p-th
	// percentile of recent latencies (e.g. 95). Window is required then.
	Percentile float64
	// Window holds recent latencies; Hedge adds the winning attempt's.
	Window *LatencyWindow
	// MinSamples is how many latencies Window must hold before its
	// percentile is used (default 1; at most the Window's size).
	MinSamples int
}

func (p *HedgePolicy) validate() {
	switch {
	case p.MaxAttempts < 0:
		panic(valueErrorf("HedgePolicy: MaxAttempts must be >= 0, got %d", p.MaxAttempts))
	case p.Delay < 0:
		panic(valueErrorf("HedgePolicy: Delay must be >= 0, got %v", p.Delay))
	case math.IsNaN(p.Percentile) || p.Percentile < 0 || p.Percentile > 100:
		panic(valueErrorf("HedgePolicy: Percentile must be in (0, 100], got %v", p.Percentile))
	case p.Percentile > 0 && p.Window == nil:
		panic(valueErrorf("HedgePolicy: Percentile %v needs a Window", p.Percentile))
	case p.MinSamples < 0:
		panic(valueErrorf("HedgePolicy: MinSamples must be >= 0, got %d", p.MinSamples))
	case p.Percentile > 0 && cap(p.Window.buf) == 0:
		// A zero LatencyWindow holds nothing (and Add would fail in the
		// winning attempt).
		panic(valueErrorf("HedgePolicy: Window has size 0 (create it with NewLatencyWindow)"))
	case p.Percentile > 0 && p.MinSamples > cap(p.Window.buf):
		// The window never holds that many: the percentile would never
		// be used, silently.
		panic(valueErrorf("HedgePolicy: MinSamples %d exceeds the Window's size %d", p.MinSamples, cap(p.Window.buf)))
	}
}

func (p *HedgePolicy) delay() time.Duration {
	if p.Percentile > 0 && p.Window.Len() >= max(1, p.MinSamples) {
		d, _ := p.Window.Percentile(p.Percentile)
		return d
	}
	return p.Delay
}

// Hedge runs fn, and if it has not succeeded after the policy's delay,
// starts it again (a hedged request), up to MaxAttempts attempts; an
// attempt that fails starts the next one at once, without waiting for the
// delay. The first attempt to succeed wins: the others are cancelled and
// awaited before Hedge returns its value, so no attempt outlives the call.
// If every attempt fails, the result is an *ExceptionGroup of their errors
// in attempt order (an attempt cancelled on its own, not by Hedge, counts
// as failed but is left out of the group; if all were, the result is the
// last one's *CancelledError). If t is cancelled, every attempt is cancelled and
// awaited and the *CancelledError is returned. Each attempt is a task; fn
// receives its attempt number (0 for the first).
//
// A negative delay, a Percentile outside (0, 100] or without a Window, a
// MinSamples above the Window's size, or a negative MaxAttempts is a
// programming error: Hedge panics with a *ValueError naming it before the
// first attempt.
func Hedge[V any](t *T, p HedgePolicy, fn func(t *T, attempt int) (V, error)) (V, error) {
	t.checkCaller("Hedge")
	p.validate()
	if fn == nil {
		panic(valueErrorf("Hedge: nil coroutine function"))
	}
	n := p.MaxAttempts
	if n == 0 {
		n = 2
	}
	return raceValue(race(t, n, p.delay, p.Window, false, fn))
}

// FirstSuccess starts every fn at once, as a task each, and returns the
// value of the first to succeed, after cancelling and awaiting the others
// (the race over replicas of examples/fanout, as API; asyncio users write
// it with as_completed or wait(FIRST_COMPLETED) and a cleanup loop). If all
// fail the result is an *ExceptionGroup of their errors in argument order;
// with no fn at all it is a *ValueError. Cancelling t cancels and awaits
// every attempt and returns the *CancelledError. A panic in an attempt is
// a bug, not a failure to race past: as in a TaskGroup it stops every
// attempt, and the result is the group's error holding the *PanicError
// (Hedge likewise) — a loser's panic too, while it is being cancelled
// after another attempt won: the value is dropped then, the bug reported.
func FirstSuccess[V any](t *T, fns ...func(*T) (V, error)) (V, error) {
	t.checkCaller("FirstSuccess")
	if len(fns) == 0 {
		var zero V
		return zero, &ValueError{Msg: "FirstSuccess: no coroutine function"}
	}
	for i, fn := range fns {
		if fn == nil {
			panic(valueErrorf("FirstSuccess: nil coroutine function at index %d", i))
		}
	}
	return raceValue(race(t, len(fns), func() time.Duration { return 0 }, nil, false,
		func(t *T, i int) (V, error) { return fns[i](t) }))
}

// StaggeredRace is asyncio.staggered.staggered_race: fns[0] starts at
// once, as a task; each next one starts when the one before it fails, or
// delay after it started, whichever comes first (a negative delay, or
// Never, is staggered_race's delay=None: only a failure starts the
// next). The first attempt to succeed wins; every other one is cancelled
// and awaited, and no further one starts. It returns the winner's value and index (-1 when
// none won: all failed, or fns is empty) and the error of every attempt
// started (as in CPython, one whose function never ran, cancelled before
// its first step, is not counted), in order: nil for the winner (and for a loser that succeeded
// before its cancellation reached it, whose value is dropped), a loser's
// *CancelledError, each failure as it was. An attempt's failure is not
// an error of the call: err is t's cancellation (every attempt is then
// cancelled and awaited, as CPython 3.13.1+ does; they are cancelled as a
// TaskGroup cancels its children, without t's message), or, as in
// FirstSuccess, the group error of an attempt that panicked.
//
// Each attempt runs in a task with a default name, Task-N, numbered as
// staggered_race's tasks are: the first at the call, each next one when
// the attempt before it begins, and one more for the task that would start
// the attempt after the last one started. (With a delay of 0 asyncio's
// wait_for makes one more task as each of those waits, which is not
// counted here.)
//
// A nil function is a programming error: StaggeredRace panics with a
// *ValueError naming its index before the first attempt starts.
func StaggeredRace[V any](t *T, delay time.Duration, fns ...func(*T) (V, error)) (winner V, index int, errs []error, err error) {
	t.checkCaller("StaggeredRace")
	for i, fn := range fns {
		if fn == nil {
			panic(valueErrorf("StaggeredRace: nil coroutine function at index %d", i))
		}
	}
	if len(fns) == 0 {
		return winner, -1, []error{}, nil
	}
	o, err := race(t, len(fns), func() time.Duration { return delay }, nil, true,
		func(t *T, i int) (V, error) { return fns[i](t) })
	return o.value, o.index, o.errs[:o.ran], err
}

// raceOutcome is what race saw: the winner's value and index (-1: none)
// and the error of every attempt started, in attempt order (nil for the
// winner and for a loser that succeeded after it; a cancelled loser's
// *CancelledError).
type raceOutcome[V any] struct {
	value V
	index int
	errs  []error
	ran   int // 1 + the last attempt whose function began (one cancelled before its first step never runs fn)
}

// race starts attempt 0, then each next one after delay() unless one has
// succeeded (at once when an attempt fails; a negative delay waits for a
// failure only), up to n attempts, inside a TaskGroup so that every
// attempt is awaited. With latestOnly only a failure of the latest attempt
// started does that, as in staggered_race, where the task waiting to start
// attempt i+1 watches attempt i's failure alone: an earlier attempt
// failing after the delay has started its successor starts nothing.
// Otherwise (Hedge) every failure starts an attempt of its own. Its error
// is t's cancellation or a panic's group error; the attempts' failures
// are in the outcome.
func race[V any](t *T, n int, delay func() time.Duration, window *LatencyWindow, latestOnly bool, fn func(*T, int) (V, error)) (raceOutcome[V], error) {
	var (
		winner  bool
		index   = -1
		ran     int
		value   V
		errs    []error // one per attempt started (n may be huge: "until one succeeds")
		kick    *Future[struct{}]
		loop    = t.Loop()
		started int
		// failed counts failures not answered yet by a new attempt: each
		// one starts its own, also when several fail in one iteration
		// (with latestOnly, only the latest attempt's failure counts).
		failed int
		// seqs, with latestOnly (staggered_race), numbers the attempts'
		// default names Task-N as asyncio numbers its tasks:
		// staggered_race makes its first task at once and then, in each
		// attempt's task just before the attempt runs, the task that will
		// start the next one (so one more task than attempts started).
		seqs []uint64
	)
	if latestOnly {
		seqs = append(seqs, taskCounter.Add(1))
	}
	wake := func() {
		if kick != nil && !kick.Done() {
			kick.SetResult(struct{}{})
		}
	}
	err := TaskGroup(t, func(g *Group) error {
		for started < n && !winner {
			i := started
			started++
			errs = append(errs, nil)
			begin := loop.Time()
			name := WithName(fmt.Sprintf("attempt-%d", i))
			if latestOnly {
				if len(seqs) == i { // attempt i-1 has not begun (a delay of 0)
					seqs = append(seqs, taskCounter.Add(1))
				}
				name = withDefaultName(seqs[i])
			}
			if _, err := Spawn(g, func(ct *T) (struct{}, error) {
				if latestOnly && len(seqs) == i+1 {
					seqs = append(seqs, taskCounter.Add(1))
				}
				ran = max(ran, i+1)
				v, err := fn(ct, i)
				switch {
				case err == nil && !winner:
					winner, value, index = true, v, i
					if window != nil {
						window.Add(loop.Time() - begin)
					}
					g.Cancel()
				case err == nil || IsCancelled(err) && (winner || g.aborting):
					errs[i] = err
					return struct{}{}, err // a loser, or all are stopping
				default:
					// A failure, or an attempt cancelled on its own:
					// the next attempt starts at once (with latestOnly,
					// unless this one's successor has started already).
					errs[i] = err
					if !latestOnly || i == started-1 {
						failed++
						wake()
					}
					if IsCancelled(err) {
						return struct{}{}, err
					}
				}
				return struct{}{}, nil
			}, name); err != nil {
				return err
			}
			if started == n {
				break
			}
			if failed > 0 { // a failure still unanswered: the next at once
				failed--
				continue
			}
			// Wait for the delay, a failure, or the end.
			kick = NewFuture[struct{}](t)
			var timer *TimerHandle
			delayed := false // the delay, not a failure, ended the wait
			switch d := delay(); {
			case d == Never:
				// No timer, as for Sleep(t, Never): a virtual clock
				// would jump to it and start the next attempt at the end
				// of time instead of reporting the deadlock.
			case d > 0:
				timer = loop.CallLater(d, func() { delayed = true; wake() })
			case d == 0:
				delayed = true
				wake()
			}
			_, err := kick.Await(t)
			if timer != nil {
				timer.Cancel()
			}
			kick = nil
			if err != nil {
				return err
			}
			switch {
			case latestOnly:
				// The attempt about to start answers the latest one's
				// failure, whichever ended the wait: staggered_race's next
				// task starts it once, on the failure or the delay. (A
				// failure seen after the delay's timer fired, in the same
				// iteration, must not start one more at once.)
				failed = 0
			case !delayed && failed > 0:
				failed--
			}
		}
		return nil
	})
	return raceOutcome[V]{value: value, index: index, errs: errs[:started:started], ran: ran}, err
}

// raceValue is Hedge's and FirstSuccess's result: the winner's value, or
// the *ExceptionGroup of the attempts' failures.
func raceValue[V any](o raceOutcome[V], err error) (V, error) {
	var zero V
	if err != nil {
		// Cancelled from outside (after the winner too: the cancellation
		// wins, as it would for any other await), or an attempt panicked
		// (a loser too, while it was being cancelled: a bug is reported,
		// never dropped because another attempt won).
		return zero, err
	}
	if o.index >= 0 {
		return o.value, nil
	}
	var all []error
	var cancelled error
	for _, e := range o.errs {
		switch {
		case IsCancelled(e):
			cancelled = e
		case e != nil:
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		// Every attempt was cancelled, each on its own.
		return zero, cancelled
	}
	return zero, &ExceptionGroup{Msg: hedgeErrorMessage, Errs: all}
}
