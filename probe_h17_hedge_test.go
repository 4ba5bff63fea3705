package asyncio

// Hedge probe (h17): a delay of Never.

import (
	"errors"
	"testing"
)

// Hedge and StaggeredRace with a delay of Never: the next attempt starts
// only when one fails. The race armed a timer at Never anyway, and a
// virtual clock with nothing else to do jumps to a timer's moment: it
// went to the end of time and started the next attempt there, where the
// loop should report the deadlock (Sleep(t, Never) keeps no timer for
// this reason; README "Where Go differs").
func TestProbeH17_HedgeDelayNeverArmsNoTimer(t *testing.T) {
	races := map[string]func(tk *T, fn func(*T, int) (int, error)) (int, error){
		"Hedge": func(tk *T, fn func(*T, int) (int, error)) (int, error) {
			return Hedge(tk, HedgePolicy{MaxAttempts: 2, Delay: Never}, fn)
		},
		"StaggeredRace": func(tk *T, fn func(*T, int) (int, error)) (int, error) {
			v, _, _, err := StaggeredRace(tk, Never,
				func(ct *T) (int, error) { return fn(ct, 0) },
				func(ct *T) (int, error) { return fn(ct, 1) })
			return v, err
		},
	}
	for name, race := range races {
		t.Run(name, func(t *testing.T) {
			var r eventLog
			_, err := Run(func(tk *T) (struct{}, error) {
				stuck := NewFuture[int](tk)
				v, err := race(tk, func(ct *T, i int) (int, error) {
					r.log("attempt %d starts at %v", i, ct.Loop().Time())
					if i == 0 {
						return stuck.Await(ct) // nobody completes it
					}
					return 7, nil
				})
				r.log("race = %d, %v", v, err)
				return struct{}{}, nil
			}, WithVirtualTime())
			if !errors.Is(err, ErrDeadlock) {
				t.Errorf("Run = %v, want ErrDeadlock", err)
			}
			r.log("run ends")
			checkEvents(t, []string{"attempt 0 starts at 0s", "race = 0, asyncio: cancelled", "run ends"}, &r)
		})
	}
}

// A HedgePolicy whose MinSamples exceeds its Window's size can never use
// its percentile (the window never holds that many latencies): Hedge
// silently hedged after Delay for ever. Such a policy is a programming
// error, refused with a *ValueError naming MinSamples before any attempt;
// so is a zero LatencyWindow.
func TestProbeH17_HedgeMinSamplesAboveTheWindowIsRefused(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ran := false
		p := HedgePolicy{Delay: ms, Percentile: 95, Window: NewLatencyWindow(4), MinSamples: 5}
		v := mustPanic(t, "MinSamples", func() {
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			_, _ = Hedge(tk, p, func(*T, int) (int, error) { ran = true; return 0, nil })
		})
		var ve *ValueError
		if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, "MinSamples") {
			t.Errorf("panic %v, want a *ValueError naming MinSamples", v)
		}
		if ran {
			t.Error("an attempt ran")
		}
		// A zero LatencyWindow (not from NewLatencyWindow) holds nothing:
		// refused too (Add failed in the winning attempt).
		zero := HedgePolicy{Delay: ms, Percentile: 95, Window: &LatencyWindow{}}
		v = mustPanic(t, "zero Window", func() {
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			_, _ = Hedge(tk, zero, func(*T, int) (int, error) { ran = true; return 0, nil })
		})
		if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, "Window") {
			t.Errorf("zero Window: panic %v, want a *ValueError naming Window", v)
		}
		if ran {
			t.Error("an attempt ran with a zero Window")
		}
		p.MinSamples = 4 // as many as the window holds: fine
		if _, err := Hedge(tk, p, func(*T, int) (int, error) { return 1, nil }); err != nil {
			t.Errorf("Hedge with MinSamples 4 of 4: %v", err)
		}
		return nil
	})
}
