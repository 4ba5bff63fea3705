package asyncio

import (
	"errors"
	"strings"
	"testing"
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
