package asyncio

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

const ms = time.Millisecond

// A limiter at 10/s with burst 5 admits 5 at once, then one every 100ms,
// exactly, on the virtual clock, in FIFO order.
func TestLimiter_ExactAdmissionTimes(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 5)
		var tasks []*Task[struct{}]
		for i := range 8 {
			tasks = append(tasks, startTask(tk, fmt.Sprint("w", i), func(tk *T) error {
				if err := lim.Acquire(tk); err != nil {
					return err
				}
				r.log("w%d admitted", i)
				return nil
			}))
		}
		awaitAll(tk, tasks...)
		st := lim.Stats()
		r.log("granted=%d waited=%d wakeups=%d ticks=%d", st.Granted, st.Waited, st.Wakeups, st.Ticks)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s w0 admitted", "0s w1 admitted", "0s w2 admitted", "0s w3 admitted", "0s w4 admitted",
		"100ms w5 admitted", "200ms w6 admitted", "300ms w7 admitted",
		"300ms granted=8 waited=3 wakeups=3 ticks=3",
	}, r)
}

// A rate whose token interval is not a whole number of nanoseconds (3/s)
// with burst 1: every admission is at the ceiling of its exact moment,
// i/3 s, however many came before (rounding each timer up to the next
// nanosecond used to lose the fraction to the full bucket: 20µs late after
// 30,000 admissions).
func TestLimiter_AdmissionsDoNotDriftWithAFractionalInterval(t *testing.T) {
	_, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(3, 1)
		for i := range 30001 {
			if err := lim.Acquire(tk); err != nil {
				return err
			}
			want := time.Duration(math.Ceil(float64(i) * 1e9 / 3))
			if got := tk.Loop().Time(); got != want {
				t.Fatalf("admission %d at %v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The bucket refills up to burst, not beyond, while nobody asks.
func TestLimiter_RefillCappedAtBurst(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 3)
		for range 3 {
			if err := lim.Acquire(tk); err != nil {
				return err
			}
		}
		r.log("tokens %.2f", lim.Tokens())
		if err := Sleep(tk, 10*time.Second); err != nil {
			return err
		}
		r.log("tokens %.2f", lim.Tokens())
		for i := range 4 {
			if err := lim.Acquire(tk); err != nil {
				return err
			}
			r.log("got %d", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s tokens 0.00", "10s tokens 3.00",
		"10s got 0", "10s got 1", "10s got 2", "10.1s got 3",
	}, r)
}

// Weighted acquisition: a request of k tokens waits for k; the queue is
// FIFO, so a small request behind a big one waits too (no barging).
func TestLimiter_WeightedFIFO(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 5)
		if err := lim.AcquireN(tk, 5); err != nil {
			return err
		}
		big := startTask(tk, "big", func(tk *T) error {
			if err := lim.AcquireN(tk, 4); err != nil {
				return err
			}
			r.log("big admitted")
			return nil
		})
		small := startTask(tk, "small", func(tk *T) error {
			if err := lim.AcquireN(tk, 1); err != nil {
				return err
			}
			r.log("small admitted")
			return nil
		})
		awaitAll(tk, big, small)
		r.log("try %v", lim.TryAcquire(tk, 1))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"400ms big admitted", "500ms small admitted", "500ms try false"}, r)
}

// A waiter cancelled while it waits leaves the queue and takes nothing:
// the next waiter is served when it would have been served anyway — and
// when the cancelled one was first, earlier.
func TestLimiter_CancelledWaiterLosesNothing(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 3)
		if err := lim.AcquireN(tk, 3); err != nil {
			return err
		}
		first := startTask(tk, "first", func(tk *T) error {
			err := lim.AcquireN(tk, 3) // would be admitted at 300ms
			r.log("first: %v", err)
			return err
		})
		second := startTask(tk, "second", func(tk *T) error {
			if err := lim.AcquireN(tk, 1); err != nil {
				return err
			}
			r.log("second admitted")
			return nil
		})
		if err := Sleep(tk, 50*ms); err != nil {
			return err
		}
		first.Cancel()
		awaitAll(tk, first, second)
		r.log("waiters=%d tokens=%.1f", lim.Waiters(), lim.Tokens())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"50ms first: asyncio: cancelled", "100ms second admitted", "100ms waiters=0 tokens=0.0"}, r)
}

// A waiter granted its tokens and cancelled before it resumes gives them
// back, and the next waiter gets them.
func TestLimiter_GrantedThenCancelledRefunds(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lim := NewLimiter(10, 1)
		if err := lim.Acquire(tk); err != nil {
			return err
		}
		a := startTask(tk, "a", func(tk *T) error {
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
		// Once a waits (its Acquire armed the limiter's timer for 100ms),
		// a callback at exactly 100ms, armed after that timer so it runs
		// after the timer granted a's token but before a resumed,
		// cancels a.
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		tk.Loop().CallAt(100*ms, func() { a.Cancel() })
		awaitAll(tk, a, b)
		st := lim.Stats()
		r.log("granted=%d refunded=%d wakeups=%d", st.Granted, st.Refunded, st.Wakeups)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"100ms a: asyncio: cancelled",
		"100ms b admitted",
		"100ms granted=2 refunded=1 wakeups=2",
	}, r)
}

// Bad input: a *ValueError naming the argument, before any state change.
func TestLimiter_BadInput(t *testing.T) {
	type badInput struct {
		rate  float64
		burst int
		word  string
	}
	cases := []badInput{{-1, 1, "rate"}, {math.NaN(), 1, "rate"}, {math.Inf(1), 1, "rate"}, {1, 0, "burst"}, {1, -3, "burst"}}
	if math.MaxInt > 1<<53 {
		// A float64 bucket cannot count past 2^53: it would never empty.
		var over int64 = 1<<53 + 1
		cases = append(cases, badInput{1, math.MaxInt, "burst"}, badInput{1, int(over), "burst"})
	}
	for _, c := range cases {
		v := mustPanic(t, "NewLimiter", func() { NewLimiter(c.rate, c.burst) })
		var ve *ValueError
		if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, c.word) {
			t.Errorf("NewLimiter(%v, %d) panicked with %v, want a *ValueError naming %s", c.rate, c.burst, v, c.word)
		}
	}
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1, 2)
		for _, k := range []int{0, 3} {
			err := lim.AcquireN(tk, k)
			var ve *ValueError
			if !errors.As(err, &ve) || !containsWord(ve.Msg, "weight") {
				t.Errorf("AcquireN(%d) = %v, want a *ValueError naming the weight", k, err)
			}
		}
		if lim.Tokens() != 2 || lim.Stats().Granted != 0 {
			t.Errorf("state changed: %v", lim)
		}
		return nil
	})
}

// A limiter is bound to one loop.
func TestLimiter_OtherLoop(t *testing.T) {
	lim := NewLimiter(1, 1)
	runVirtual(t, func(tk *T) error { return lim.Acquire(tk) })
	runVirtual(t, func(tk *T) error {
		if err := lim.Acquire(tk); !errors.Is(err, ErrRuntime) {
			t.Errorf("Acquire on another loop = %v", err)
		}
		return nil
	})
}

// 1,000 waiters: every tick wakes exactly one (wakeups == waited, one
// tick per grant), never a broadcast.
func TestLimiter_OneWakeupPerGrant(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1000, 1)
		n := 1000
		var tasks []*Task[struct{}]
		for range n {
			tasks = append(tasks, startTask(tk, "w", func(tk *T) error { return lim.Acquire(tk) }))
		}
		awaitAll(tk, tasks...)
		st := lim.Stats()
		if st.Granted != int64(n) || st.Wakeups != st.Waited || st.Ticks != st.Wakeups || st.Waited != int64(n-1) {
			t.Errorf("stats %+v", st)
		}
		if got := tk.Loop().Time(); got != 999*ms {
			t.Errorf("last admitted at %v, want 999ms", got)
		}
		return nil
	})
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}

// A rate-0 limiter is a fixed budget: burst tokens, then nothing.
func TestLimiter_RateZeroIsABudget(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(0, 2)
		got := []bool{lim.TryAcquire(tk, 1), lim.TryAcquire(tk, 1), lim.TryAcquire(tk, 1)}
		if err := Sleep(tk, time.Hour); err != nil {
			return err
		}
		got = append(got, lim.TryAcquire(tk, 1))
		if fmt.Sprint(got) != "[true true false false]" {
			t.Errorf("TryAcquire: %v", got)
		}
		return nil
	})
}

// A rate so small that the wait for the next token does not fit in a
// time.Duration waits (forever, as good as) instead of overflowing to a
// negative wait: the timer must not fire again and again.
func TestLimiter_TinyRateDoesNotSpin(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1e-12, 1)
		if err := lim.Acquire(tk); err != nil {
			return err
		}
		_, err := WaitForFunc(tk, time.Hour, func(t *T) (struct{}, error) { return struct{}{}, lim.Acquire(t) })
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("second Acquire: %v, want a timeout after an hour", err)
		}
		if ticks := lim.Stats().Ticks; ticks != 0 {
			t.Errorf("the limiter's timer fired %d times, want 0", ticks)
		}
		return nil
	})
}

// A rate whose next token is due past Never, on virtual time, with no
// other timer: the wait is a deadlock, as for rate 0 (a timer at Never
// fired, granted nothing and re-armed itself, spinning for ever once the
// clock got there).
func TestLimiter_TinyRateWithNothingElseIsADeadlock(t *testing.T) {
	lim := NewLimiter(1e-12, 1)
	_, err := Run(func(tk *T) (struct{}, error) {
		if err := lim.Acquire(tk); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, lim.Acquire(tk)
	}, WithVirtualTime())
	if !errors.Is(err, ErrDeadlock) || lim.Stats().Ticks != 0 {
		t.Errorf("Run: %v, %d ticks; want ErrDeadlock and no tick", err, lim.Stats().Ticks)
	}
}

// Waiters served late (the loop was busy past their moment) take their
// tokens from a bucket capped at burst, now: at most burst are admitted
// at once (taking each at its past moment admitted up to twice burst).
func TestLimiter_LateDispatchAdmitsAtMostBurst(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(10, 5)
		if err := lim.AcquireN(tk, 5); err != nil { // empty
			return err
		}
		var waiters []*Task[struct{}]
		for i := range 5 {
			waiters = append(waiters, startTask(tk, fmt.Sprint("w", i), func(tk *T) error { return lim.Acquire(tk) }))
		}
		if err := Sleep(tk, 0); err != nil { // all five wait
			return err
		}
		lim.timer.Cancel() // as if the loop were too busy to run the tick on time
		lim.timer = nil
		if err := Sleep(tk, 2*time.Second); err != nil {
			return err
		}
		lim.dispatch() // late: 2 s of refill, capped at 5
		awaitAll(tk, waiters...)
		extra := 0
		for lim.TryAcquire(tk, 1) {
			extra++
		}
		if extra != 0 {
			t.Errorf("after 5 late grants from a bucket of burst 5, %d more admitted at once", extra)
		}
		return nil
	})
}

// A waiter cancelled, whose task has not resumed yet to leave the queue,
// no longer waits: TryAcquire and AcquireN made in that window are served
// at once from the tokens there (asyncio's Semaphore.locked skips
// cancelled waiters), not refused (TryAcquire returned false) or queued
// behind it (AcquireN suspended for an iteration), and the cancelled
// waiter still takes nothing. (Probe h49.)
func TestLimiter_CancelledWaiterNotYetResumedHoldsNothingBack(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(1, 3)
		if err := lim.AcquireN(tk, 2); err != nil {
			return err
		}
		a := startTask(tk, "a", func(tk *T) error { return lim.AcquireN(tk, 3) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		a.Cancel()
		if !lim.TryAcquire(tk, 1) || lim.Waiters() != 0 {
			t.Errorf("TryAcquire behind a cancelled waiter refused (waiters %d)", lim.Waiters())
		}
		if err := Sleep(tk, 2*time.Second); err != nil { // 2 tokens again
			return err
		}
		b := startTask(tk, "b", func(tk *T) error { return lim.AcquireN(tk, 3) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		b.Cancel()
		suspended := false
		tk.Loop().CallSoon(func() { suspended = true })
		if err := lim.AcquireN(tk, 2); err != nil {
			return err
		}
		if suspended || tk.Loop().Time() != 2*time.Second {
			t.Errorf("AcquireN behind a cancelled waiter suspended (at %v)", tk.Loop().Time())
		}
		awaitAll(tk, a, b)
		if st := lim.Stats(); st.Granted != 3 || st.Waited != 2 || st.Wakeups != 0 || st.Refunded != 0 || lim.Waiters() != 0 {
			t.Errorf("stats %+v, waiters %d", st, lim.Waiters())
		}
		return nil
	})
}

// Reading the bucket (Tokens, String) and acquisitions that only queue
// must not change when the waiters are admitted: at 3/s (an interval that
// is not a whole number of nanoseconds) the j-th admission is at the
// ceiling of j/3 s however many reads and arrivals came in between. Both
// used to move the bucket's reference instant to their own whole
// nanosecond, rounding it each time: admissions drifted a nanosecond late
// within seconds. (Probe h49.)
func TestLimiter_ReadsAndArrivalsDoNotShiftAdmissions(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		lim := NewLimiter(3, 1)
		var admitted []time.Duration
		n := 0
		var arrive func()
		arrive = func() {
			_ = lim.Tokens()
			_ = lim.String()
			if len(admitted) >= 300 {
				return
			}
			if n%4 == 0 { // a new task joins the queue every fourth tick
				startTask(tk, "w", func(tk *T) error {
					if err := lim.Acquire(tk); err != nil {
						return err
					}
					admitted = append(admitted, tk.Loop().Time())
					return nil
				})
			}
			n++
			tk.Loop().CallLater(7*ms+333, arrive)
		}
		arrive()
		for len(admitted) < 300 {
			if err := Sleep(tk, time.Second); err != nil {
				return err
			}
		}
		bad := 0
		for j, got := range admitted[:300] {
			if want := time.Duration(math.Ceil(float64(j) * 1e9 / 3)); got != want && bad < 3 {
				bad++
				t.Errorf("admission %d at %v, want %v", j, got, want)
			}
		}
		return nil
	})
}
