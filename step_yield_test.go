package asyncio

import (
	"testing"
	"time"
)

// A yield with nothing else to run takes the short way (yieldsAlone,
// iterateAlone); it must count what a full iteration counts.
func TestYieldAlone_CountsAsAFullIteration(t *testing.T) {
	const n = 300
	counts := func(slow bool) LoopStats {
		l := NewTestLoop()
		defer mustClose(t, l)
		if slow {
			l.SetBeforePoll(func() {}) // a hook: every yield takes the full iteration
		}
		tk := CreateTask(l, func(t *T) (int, error) {
			for range n {
				if err := Sleep(t, 0); err != nil {
					return 0, err
				}
			}
			return n, nil
		})
		if err := l.RunUntilComplete(tk); err != nil {
			t.Fatal(err)
		}
		return l.Stats()
	}
	fast, slow := counts(false), counts(true)
	if fast.Iterations != slow.Iterations || fast.Steps != slow.Steps || fast.Callbacks != slow.Callbacks {
		t.Errorf("short way: %d iterations, %d steps, %d callbacks; full iterations: %d, %d, %d",
			fast.Iterations, fast.Steps, fast.Callbacks, slow.Iterations, slow.Steps, slow.Callbacks)
	}
}

// Each thing an iteration would do besides the yielding task's step sends
// the yield the full way.
func TestYieldAlone_OnlyWhenNothingElseIsDue(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var got []bool
	tk := CreateTask(l, func(t *T) (int, error) {
		got = append(got, l.yieldsAlone(t)) // alone: true
		h := l.CallSoon(func() {})
		got = append(got, l.yieldsAlone(t)) // a callback queued
		h.Cancel()
		if err := Sleep(t, 0); err != nil {
			return 0, err
		}
		th := l.CallLater(time.Hour, func() {})
		got = append(got, l.yieldsAlone(t)) // a timer
		th.Cancel()
		if err := Sleep(t, time.Millisecond); err != nil { // drops the cancelled timer
			return 0, err
		}
		_, _ = l.CallSoonThreadsafe(func() {})
		got = append(got, l.yieldsAlone(t)) // a thread-safe call
		if err := Sleep(t, 0); err != nil {
			return 0, err
		}
		t.Cancel()
		got = append(got, l.yieldsAlone(t)) // its own cancellation to throw in
		err := Sleep(t, 0)
		got = append(got, IsCancelled(err))
		t.Uncancel()
		got = append(got, l.yieldsAlone(t)) // alone again
		return 0, nil
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	want := []bool{true, false, false, false, false, true, true}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("check %d: %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}
