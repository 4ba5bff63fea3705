package asyncio

import (
	"io"
	"runtime/trace"
	"testing"
)

// Tracing can start and stop at any time: the loop adds the trace observer
// at the first iteration after trace.Start and drops it after trace.Stop,
// so with nothing else on it is back to no observer at all.
func TestObservers_FollowTracingStartAndStop(t *testing.T) {
	var during, after string
	before := "unset"
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		before = observerNames(l.obs)
		if err := trace.Start(io.Discard); err != nil {
			return err
		}
		if err := Sleep(tk, 0); err != nil { // one iteration
			trace.Stop()
			return err
		}
		during = observerNames(l.obs)
		trace.Stop()
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		after = observerNames(l.obs)
		return nil
	})
	if before != "" || during != "trace" || after != "" {
		t.Errorf("observers before %q, while tracing %q, after %q; want \"\", \"trace\", \"\"", before, during, after)
	}
}

// The cancellation tester's hook is an observer too: installing it adds
// one, removing it leaves none.
func TestObservers_TesterHook(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	l.diagSet.tester = func(*T, func() string) {}
	l.settingsChanged()
	if got := observerNames(l.obs); got != "tester" {
		t.Errorf("with the tester's hook: observers %q, want \"tester\"", got)
	}
	l.diagSet.tester = nil
	l.settingsChanged()
	if l.obs != nil {
		t.Errorf("after removing it: observers %q", observerNames(l.obs))
	}
}

// An eager first step is timed as a step of its own, nested in its
// creator's: with step timing on, StepDurations counts it besides the
// scheduled steps, and the creator's step is still counted once.
func TestObservers_EagerStepTimedOnItsOwn(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithStepTiming())
	defer mustClose(t, l)
	main := CreateTask(l, func(t *T) (int, error) {
		e := CreateTask(t, func(t *T) (int, error) { return 1, nil }, WithEagerStart())
		_, err := e.Await(t) // done already: no suspension
		return 0, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	var timed uint64
	for _, n := range s.StepDurations {
		timed += n
	}
	if s.Steps != 1 || timed != 2 {
		t.Errorf("Steps %d, timed steps %d: want 1 scheduled step and 2 timed (main's and the eager one)", s.Steps, timed)
	}
}
