package asyncio

// StaggeredRace probe (h22): which failure starts the next attempt, and
// the names of the attempts' tasks.

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// In staggered_race the task that will start attempt i+1 waits for attempt
// i's failure or the delay, nothing else. So an attempt that fails after
// the delay has already started its successor starts nothing: the next
// attempt still waits for the delay after the latest one started, or for
// the latest one's failure (tests/ports p87, recorded from CPython 3.13.0).
// The race counted every failure and answered each with a new attempt at
// once, as Hedge does.
func TestProbeH22_StaggeredRaceOnlyTheLatestFailureStartsTheNext(t *testing.T) {
	r := &eventLog{}
	runVirtual(t, func(tk *T) error {
		r.clock = tk.Loop()
		attempt := func(name string, d time.Duration, ok bool) func(*T) (string, error) {
			return func(ct *T) (string, error) {
				r.log("%s starts", name)
				if err := Sleep(ct, d); err != nil {
					r.log("%s cancelled", name)
					return "", err
				}
				if !ok {
					r.log("%s fails", name)
					return "", errors.New(name)
				}
				r.log("%s connects", name)
				return name, nil
			}
		}
		// a0 fails at 300ms, after the delay started a1 at 200ms: a2
		// starts 200ms after a1, at 400ms, not at 300ms.
		w, i, errs, err := StaggeredRace(tk, 200*time.Millisecond,
			attempt("a0", 300*time.Millisecond, false),
			attempt("a1", 500*time.Millisecond, true),
			attempt("a2", 110*time.Millisecond, true))
		r.log("winner %s index %d errors %d err %v", w, i, len(errs), err)
		// b1, the latest, fails 460ms in, after b0's failure at 330ms
		// (which started nothing): b2 had started at 400ms anyway, so
		// b1's failure starts nothing either; b3 waits for b2's delay.
		_, i, _, err = StaggeredRace(tk, 200*time.Millisecond,
			attempt("b0", 330*time.Millisecond, false),
			attempt("b1", 260*time.Millisecond, false),
			attempt("b2", 270*time.Millisecond, true),
			attempt("b3", 200*time.Millisecond, true))
		r.log("index %d err %v", i, err)
		return nil
	})
	checkEvents(t, []string{
		"0s a0 starts",
		"200ms a1 starts",
		"300ms a0 fails",
		"400ms a2 starts",
		"510ms a2 connects",
		"510ms a1 cancelled",
		"510ms winner a2 index 2 errors 3 err <nil>",
		"510ms b0 starts",
		"710ms b1 starts",
		"840ms b0 fails",
		"910ms b2 starts",
		"970ms b1 fails",
		"1.11s b3 starts",
		"1.18s b2 connects",
		"1.18s b3 cancelled",
		"1.18s index 2 err <nil>",
	}, r)
}

// staggered_race's attempts run in tasks with default names, numbered
// when asyncio makes them: its first task at the call, then in each
// attempt's task, just before the attempt runs, the task that will start
// the next one. So attempt i runs in Task-(N+i) and the race draws one
// number more than the attempts it started (tests/ports p86). The race
// named them attempt-0, attempt-1, ... and drew a number for none.
func TestProbeH22_StaggeredRaceAttemptsHaveCPythonsDefaultNames(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		seq := func(name string) int {
			var n int
			if _, err := fmt.Sscanf(name, "Task-%d", &n); err != nil {
				t.Errorf("%q is not a default task name", name)
			}
			return n
		}
		before := seq(CreateTask(tk, func(*T) (int, error) { return 0, nil }).Name())
		var names []string
		attempt := func(d time.Duration) func(*T) (int, error) {
			return func(ct *T) (int, error) {
				names = append(names, ct.Name())
				return 1, Sleep(ct, d)
			}
		}
		// The first attempt is still running when the delay starts the
		// second, which wins; its successor's task, made but never run,
		// took Task-(before+3).
		if _, i, _, err := StaggeredRace(tk, 50*time.Millisecond, attempt(100*time.Millisecond), attempt(0)); err != nil || i != 1 {
			t.Fatalf("race: index %d, err %v", i, err)
		}
		after := seq(CreateTask(tk, func(*T) (int, error) { return 0, nil }).Name())
		want := []string{fmt.Sprintf("Task-%d", before+1), fmt.Sprintf("Task-%d", before+2)}
		if len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
			t.Errorf("attempts ran in %q, want %q", names, want)
		}
		if after != before+4 {
			t.Errorf("next default name Task-%d, want Task-%d", after, before+4)
		}
		return nil
	})
}
