package asyncio

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// staggered returns StaggeredRace's attempt i: it logs its start, takes
// lat[i], then fails with errs[i] (nil: returns "r<i>"); lat[i] < 0 returns
// at once without suspending.
func staggered(r *eventLog, lat []time.Duration, errs []error) []func(*T) (string, error) {
	fns := make([]func(*T) (string, error), len(lat))
	for i := range lat {
		fns[i] = func(tk *T) (string, error) {
			r.log("attempt %d start", i)
			if lat[i] >= 0 {
				if err := Sleep(tk, lat[i]); err != nil {
					r.log("attempt %d: %v", i, err)
					return "", err
				}
			}
			if errs != nil && errs[i] != nil {
				r.log("attempt %d fails", i)
				return "", errs[i]
			}
			return fmt.Sprint("r", i), nil
		}
	}
	return fns
}

func logRace(r *eventLog, v string, i int, errs []error, err error) {
	r.log("%q %d %v %v", v, i, errs, err)
}

func TestStaggeredRace_Events(t *testing.T) {
	cases := []struct {
		name  string
		delay time.Duration
		lat   []time.Duration
		errs  []error
		want  []string
	}{
		{"delay chain", 100 * ms, []time.Duration{time.Hour, time.Hour, 50 * ms, 0}, nil, []string{
			"0s attempt 0 start",
			"100ms attempt 1 start",
			"200ms attempt 2 start",
			"250ms attempt 0: asyncio: cancelled",
			"250ms attempt 1: asyncio: cancelled",
			`250ms "r2" 2 [asyncio: cancelled asyncio: cancelled <nil>] <nil>`,
		}},
		{"a failure starts the next at once", 100 * ms, []time.Duration{30 * ms, 10 * ms}, []error{errors.New("boom"), nil}, []string{
			"0s attempt 0 start",
			"30ms attempt 0 fails",
			"30ms attempt 1 start",
			`40ms "r1" 1 [boom <nil>] <nil>`,
		}},
		{"no delay: only a failure starts the next", -1, []time.Duration{10 * time.Second, 5 * ms}, []error{errors.New("slow"), nil}, []string{
			"0s attempt 0 start",
			"10s attempt 0 fails",
			"10s attempt 1 start",
			`10.005s "r1" 1 [slow <nil>] <nil>`,
		}},
		{"all fail", -1, []time.Duration{-1, -1}, []error{errors.New("a"), errors.New("b")}, []string{
			"0s attempt 0 start",
			"0s attempt 0 fails",
			"0s attempt 1 start",
			"0s attempt 1 fails",
			`0s "" -1 [a b] <nil>`,
		}},
		// aiohappyeyeballs' test_one_winners: a winner that never suspends
		// leaves no other attempt started, even with a zero delay.
		{"an immediate winner, delay 0", 0, []time.Duration{-1, -1, -1}, nil, []string{
			"0s attempt 0 start",
			`0s "r0" 0 [<nil>] <nil>`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := runMain(t, func(tk *T, r *eventLog) error {
				v, i, errs, err := StaggeredRace(tk, c.delay, staggered(r, c.lat, c.errs)...)
				logRace(r, v, i, errs, err)
				if n := len(AllTasks(tk)); n != 1 {
					return fmt.Errorf("%d tasks left (want only main)", n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkEvents(t, c.want, r)
		})
	}
}

// Cancelling the caller cancels every attempt (as a TaskGroup cancels
// its children) and awaits them before StaggeredRace returns the cancellation.
func TestStaggeredRace_CallerCancelled(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		racer := CreateTask(tk, func(tk *T) (struct{}, error) {
			v, i, errs, err := StaggeredRace(tk, 10*ms, staggered(r, []time.Duration{time.Hour, time.Hour}, nil)...)
			logRace(r, v, i, errs, err)
			return struct{}{}, err
		})
		if err := Sleep(tk, 15*ms); err != nil {
			return err
		}
		racer.Cancel("stop")
		_, err := racer.Await(tk)
		r.log("racer: %v cancelled=%v", err, racer.Cancelled())
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
		`15ms "" -1 [asyncio: cancelled asyncio: cancelled] asyncio: cancelled: stop`,
		"15ms racer: asyncio: cancelled: stop cancelled=true",
	}, r)
}

// A nil function is refused before any attempt starts.
func TestStaggeredRace_NilFunction(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		fns := staggered(r, []time.Duration{0, 0}, nil)
		fns = append(fns, nil)
		v := mustPanic(t, "StaggeredRace with a nil function", func() {
			//asynciovet:ignore droppedcancel the call panics on its nil function before it can suspend; the panic is what the test checks
			StaggeredRace(tk, -1, fns...)
		})
		var ve *ValueError
		if e, ok := v.(error); !ok || !errors.As(e, &ve) || !strings.Contains(ve.Error(), "index 2") {
			return fmt.Errorf("panic value %v, want a *ValueError naming index 2", v)
		}
		r.log("tasks=%d", len(AllTasks(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s tasks=1"}, r)
}
