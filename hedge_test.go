package asyncio

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// replica returns an attempt function whose attempt i takes lat[i] and
// then fails with errs[i] (nil: succeeds with "r<i>"); it logs starts and
// cancellations.
func replica(r *eventLog, lat []time.Duration, errs []error) func(*T, int) (string, error) {
	return func(tk *T, i int) (string, error) {
		r.log("attempt %d start", i)
		if err := Sleep(tk, lat[i]); err != nil {
			r.log("attempt %d: %v", i, err)
			return "", err
		}
		if errs != nil && errs[i] != nil {
			r.log("attempt %d fails", i)
			return "", errs[i]
		}
		return fmt.Sprint("r", i), nil
	}
}

// A fixed delay: the hedge starts after it, the faster wins, the loser is
// cancelled and awaited before Hedge returns.
func TestHedge_FixedDelay(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v, err := Hedge(tk, HedgePolicy{Delay: 20 * ms}, replica(r, []time.Duration{100 * ms, 10 * ms}, nil))
		r.log("%q %v tasks=%d", v, err, len(AllTasks(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 0 start",
		"20ms attempt 1 start",
		"30ms attempt 0: asyncio: cancelled",
		`30ms "r1" <nil> tasks=1`,
	}, r)
}

// Two attempts failing at the same moment each start a new one at once
// (the second failure's wakeup was lost: attempt 3 waited for the delay).
func TestHedge_SimultaneousFailuresEachStartAnAttempt(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		// Attempt 0 starts at 0 and attempt 1 at 100ms; both fail at 150ms.
		v, err := Hedge(tk, HedgePolicy{Delay: 100 * ms, MaxAttempts: 4},
			replica(r, []time.Duration{150 * ms, 50 * ms, time.Second, time.Second}, []error{boom, boom, nil, nil}))
		r.log("%q %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 0 start",
		"100ms attempt 1 start",
		"150ms attempt 0 fails",
		"150ms attempt 1 fails",
		"150ms attempt 2 start",
		"150ms attempt 3 start",
		"1.15s attempt 3: asyncio: cancelled",
		`1.15s "r2" <nil>`,
	}, r)
}

// The first attempt finishing before the delay: no hedge at all.
func TestHedge_NoHedgeWhenFast(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v, err := Hedge(tk, HedgePolicy{Delay: 20 * ms, MaxAttempts: 3}, replica(r, []time.Duration{5 * ms, ms, ms}, nil))
		r.log("%q %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s attempt 0 start", `5ms "r0" <nil>`}, r)
}

// A failure starts the next attempt at once; all failing gives an
// ExceptionGroup of every attempt's error, in attempt order.
func TestHedge_AllFail(t *testing.T) {
	e0, e1, e2 := errors.New("e0"), errors.New("e1"), errors.New("e2")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		_, err := Hedge(tk, HedgePolicy{Delay: 50 * ms, MaxAttempts: 3},
			replica(r, []time.Duration{80 * ms, 10 * ms, 5 * ms}, []error{e0, e1, e2}))
		var eg *ExceptionGroup
		r.log("%v group=%v", err, errors.As(err, &eg))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 0 start",
		"50ms attempt 1 start",
		"60ms attempt 1 fails",
		"60ms attempt 2 start",
		"65ms attempt 2 fails",
		"80ms attempt 0 fails",
		"80ms all attempts failed (3 sub-exceptions) group=true",
	}, r)
}

// The delay from the p-th percentile of recent latencies.
func TestHedge_Percentile(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := NewLatencyWindow(4)
		for _, d := range []time.Duration{10, 20, 30, 40, 50} {
			w.Add(d * ms) // 10 drops out
		}
		p95, _ := w.Percentile(95)
		p50, _ := w.Percentile(50)
		r.log("p95=%v p50=%v", p95, p50)
		v, err := Hedge(tk, HedgePolicy{Delay: time.Hour, Percentile: 50, Window: w},
			replica(r, []time.Duration{time.Second, 5 * ms}, nil))
		r.log("%q %v", v, err)
		p100, _ := w.Percentile(100)
		r.log("window %d max %v", w.Len(), p100)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s p95=50ms p50=30ms",
		"0s attempt 0 start",
		"30ms attempt 1 start",
		"35ms attempt 0: asyncio: cancelled",
		`35ms "r1" <nil>`,
		"35ms window 4 max 50ms",
	}, r)
}

// Cancelling the caller cancels and awaits every attempt.
func TestHedge_OutsideCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := startTask(tk, "inner", func(tk *T) error {
			_, err := Hedge(tk, HedgePolicy{Delay: 10 * ms}, replica(r, []time.Duration{time.Hour, time.Hour}, nil))
			r.log("inner: %v", err)
			return err
		})
		if err := Sleep(tk, 15*ms); err != nil {
			return err
		}
		inner.Cancel()
		awaitAll(tk, inner)
		r.log("tasks=%d", len(AllTasks(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s attempt 0 start",
		"10ms attempt 1 start",
		"15ms attempt 0: asyncio: cancelled",
		"15ms attempt 1: asyncio: cancelled",
		"15ms inner: asyncio: cancelled",
		"15ms tasks=1",
	}, r)
}

// FirstSuccess: all replicas at once, first success wins, losers awaited;
// failures before it do not matter.
func TestFirstSuccess(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		rep := func(name string, d time.Duration, err error) func(*T) (string, error) {
			return func(tk *T) (string, error) {
				if e := Sleep(tk, d); e != nil {
					r.log("%s: %v", name, e)
					return "", e
				}
				return name, err
			}
		}
		v, err := FirstSuccess(tk, rep("a", 30*ms, nil), rep("b", 5*ms, boom), rep("c", 20*ms, nil))
		r.log("%q %v", v, err)
		_, err = FirstSuccess(tk, rep("x", ms, boom), rep("y", 2*ms, errFlaky))
		r.log("%v", err)
		_, err = FirstSuccess[int](tk)
		r.log("%v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"20ms a: asyncio: cancelled",
		`20ms "c" <nil>`,
		"22ms all attempts failed (2 sub-exceptions)",
		"22ms asyncio: FirstSuccess: no coroutine function",
	}, r)
}

// Bad policies: *ValueError naming the field, before any attempt.
func TestHedge_BadPolicy(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ran := false
		fn := func(tk *T, i int) (int, error) { ran = true; return 0, nil }
		for _, c := range []struct {
			p    HedgePolicy
			word string
		}{
			{HedgePolicy{Delay: -ms}, "Delay"},
			{HedgePolicy{MaxAttempts: -1}, "MaxAttempts"},
			{HedgePolicy{Percentile: 101, Window: NewLatencyWindow(1)}, "Percentile"},
			{HedgePolicy{Percentile: 90}, "Window"},
		} {
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			v := mustPanic(t, c.word, func() { _, _ = Hedge(tk, c.p, fn) })
			var ve *ValueError
			if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, c.word) {
				t.Errorf("%+v: panic %v, want a *ValueError naming %s", c.p, v, c.word)
			}
		}
		if ran {
			t.Error("an attempt ran")
		}
		mustPanic(t, "window", func() { NewLatencyWindow(0) })
		return nil
	})
}

// LatencyWindow.Percentile takes 0 < p <= 100, as HedgePolicy.Percentile
// does: a p outside that (or NaN) is a *ValueError naming it, not a
// value clamped to the smallest or largest latency.
func TestLatencyWindowPercentileOutOfRangeIsValueError(t *testing.T) {
	w := NewLatencyWindow(4)
	for _, d := range []time.Duration{40, 10, 30, 20} {
		w.Add(d)
	}
	for _, p := range []float64{0, -5, 100.5, math.NaN()} {
		v := mustPanic(t, fmt.Sprintf("Percentile(%v)", p), func() { w.Percentile(p) })
		var ve *ValueError
		if err, _ := v.(error); !errors.As(err, &ve) || !strings.Contains(ve.Msg, "p must be in (0, 100]") {
			t.Errorf("Percentile(%v) panicked with %v, want a *ValueError naming p", p, v)
		}
	}
	if d, ok := w.Percentile(100); d != 40 || !ok {
		t.Errorf("Percentile(100) = %v, %v; want 40ns, true", d, ok)
	}
	if d, ok := w.Percentile(25); d != 10 || !ok {
		t.Errorf("Percentile(25) = %v, %v; want 10ns, true", d, ok)
	}
}
