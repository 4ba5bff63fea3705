package asyncio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Probes of LoopGroup (h5): Close while the loops are in every state, a
// panic in one loop.

// Close while loop 0's main waits, loop 1's main is blocked in a plain
// call (its loop cannot run anything), loop 2's main panics when it is
// cancelled, and loop 3's main is done (its loop serves). Close cancels
// every main, waits for the blocked one, and closes every loop; RunEach
// reports loop 2's panic alone (the others ended cancelled by the group).
func TestH5_GroupCloseWithLoopsInEveryState(t *testing.T) {
	for _, policy := range []FailurePolicy{CancelGroupOnFailure, IsolateFailure} {
		g := NewLoopGroup(WithLoops(4), WithFailurePolicy(policy))
		quietGroup(g)
		blocked, release := make(chan struct{}), make(chan struct{})
		up := make(chan struct{}, 4)
		out := make(chan error, 1)
		go func() {
			_, err := RunEach(g, func(tk *T, i int) (int, error) {
				//asynciovet:ignore blockingcall buffered with room for every main: it never blocks
				up <- struct{}{}
				switch i {
				case 1:
					close(blocked)
					//asynciovet:ignore blockingcall the loop blocked in its main is the state probed
					<-release
					return 1, nil
				case 2:
					_, err := NewFuture[int](tk).Await(tk)
					panic("loop 2 panics on its way out: " + errString(err))
				case 3:
					return 3, nil
				}
				return NewFuture[int](tk).Await(tk)
			})
			out <- err
		}()
		for range 4 {
			<-up
		}
		<-blocked
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		// Close cannot finish while loop 1 is blocked.
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while loop 1 was blocked", err)
		default:
		}
		close(release)
		if err, ok := waitOrHang(t, closed, "Close"); ok && err != nil {
			t.Errorf("policy %d: Close: %v", policy, err)
		}
		err, _ := waitOrHang(t, out, "RunEach")
		var le *LoopError
		var pe *PanicError
		if !errors.As(err, &le) || le.Index != 2 || !errors.As(err, &pe) || !strings.Contains(err.Error(), "loop 2 panics") ||
			strings.Contains(err.Error(), "loop 0") || strings.Contains(err.Error(), "loop 1:") {
			t.Errorf("policy %d: RunEach: %v; want loop 2's panic alone", policy, err)
		}
		for i, l := range g.Loops() {
			if !l.IsClosed() {
				t.Errorf("policy %d: loop %d not closed", policy, i)
			}
		}
	}
}

// A main that panics, under the default policy: RunEach reports that loop
// alone, with a *PanicError carrying the panicking task's stack; the other
// mains are cancelled by the group (their cleanup still runs and can call
// the loop that failed, which goes on serving), and are not listed.
func TestH5_PanicInOneMainCancelsTheOthersByDefault(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	defer g.Close()
	cleanups := make(chan string, 2)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			h5PanickingMain()
		}
		_, err := NewFuture[int](tk).Await(tk)
		if errors.Is(err, ErrGroupCancelled) || IsCancelled(err) {
			v, cerr := CallFuncOn(tk, g.Loop(1), func() (int, error) { return 1, nil })
			//asynciovet:ignore blockingcall buffered with room for both cleanups: it never blocks
			cleanups <- errString(cerr)
			_ = v
		}
		return 0, err
	})
	var le *LoopError
	var pe *PanicError
	if !errors.As(err, &le) || le.Index != 1 || !errors.As(err, &pe) || pe.Value != "h5 main panic" ||
		!strings.Contains(string(pe.Stack), "h5PanickingMain") {
		t.Fatalf("RunEach: %v; want loop 1's *PanicError with its stack", err)
	}
	if strings.Count(err.Error(), "loop") != 1 {
		t.Errorf("RunEach lists more than loop 1: %v", err)
	}
	close(cleanups)
	n := 0
	for c := range cleanups {
		n++
		if c != "<nil>" {
			t.Errorf("a cancelled main's cleanup could not call the failed loop: %s", c)
		}
	}
	if n != 2 {
		t.Errorf("%d cleanups ran, want 2", n)
	}
}

//go:noinline
func h5PanickingMain() { panic("h5 main panic") }

// Close called from a job of the default executor of one of the group's
// loops would wait for that job (closing the loop shuts its executor down
// and waits for its jobs: 300 s, then it gives up): it returns an error
// naming the loop and changes nothing, as from an OnClose hook.
func TestH5_GroupCloseFromAnExecutorJobOfItsLoopIsAnError(t *testing.T) {
	// Without the check, Close would hold for this long, then go on.
	defer func(d time.Duration) { executorJoinTimeout = d }(executorJoinTimeout)
	executorJoinTimeout = time.Second
	g := NewLoopGroup(WithLoops(2))
	quietGroup(g)
	var closeErr error
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 0 {
			_, err := RunInExecutor(tk, func(context.Context) (struct{}, error) {
				closeErr = g.Close()
				return struct{}{}, nil
			}).Await(tk)
			return 0, err
		}
		return 0, nil
	})
	if err != nil {
		t.Errorf("RunEach: %v; want nil (Close changed nothing)", err)
	}
	var re *RuntimeError
	if !errors.As(closeErr, &re) || !strings.Contains(closeErr.Error(), "executor of loop 0") {
		t.Errorf("Close from an executor job of loop 0: %v; want a *RuntimeError naming loop 0", closeErr)
	}
	for i, l := range g.Loops() {
		if l.IsClosed() {
			t.Errorf("loop %d closed by the refused Close", i)
		}
	}
	// A Go call's goroutine is not waited for: Close from there works.
	closed := make(chan error, 1)
	_, err = RunGroup(g, func(tk *T) (int, error) {
		return Go(tk, func(context.Context) (int, error) { closed <- g.Close(); return 0, nil })
	})
	if err != nil && !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunGroup: %v", err)
	}
	// The cancelled main returns at once; Close goes on in the Go call.
	if goErr, _ := waitOrHang(t, closed, "Close from a Go call"); goErr != nil {
		t.Errorf("Close from a Go call: %v", goErr)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d not closed", i)
		}
	}
}

// RunEach and RunGroup on a group not made by NewLoopGroup (nil, or the
// zero LoopGroup, which has no loops) panic with a *ValueError naming the
// mistake, before anything changes (RunEach on the zero group ran nothing
// and reported success; RunGroup failed with an index out of range, and
// both crashed on nil).
func TestH5_RunOnANilOrZeroGroupIsAValueError(t *testing.T) {
	for _, g := range []*LoopGroup{nil, {}} {
		ran := false
		v := mustPanic(t, "RunEach", func() {
			_, _ = RunEach(g, func(tk *T, i int) (int, error) { ran = true; return 0, nil })
		})
		if !valueErrorPanic(v, "RunEach: nil or zero LoopGroup") {
			t.Errorf("RunEach(%v): panic %v; want a *ValueError naming the group", g, v)
		}
		v = mustPanic(t, "RunGroup", func() {
			_, _ = RunGroup(g, func(tk *T) (int, error) { ran = true; return 0, nil })
		})
		if !valueErrorPanic(v, "RunGroup: nil or zero LoopGroup") {
			t.Errorf("RunGroup(%v): panic %v; want a *ValueError naming the group", g, v)
		}
		if ran || (g != nil && g.Running()) {
			t.Errorf("a refused run changed something: main ran %v, running %v", ran, g != nil && g.Running())
		}
	}
}
