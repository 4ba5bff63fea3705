//go:build linux

package asyncio

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// LoopGroup.Close from another goroutine while RunEach runs, at every
// moment: each of two mains calls the other loop (CallOn, CallFuncOn) in
// turn and counts what came back. At loop 0's k-th iteration a foreign
// goroutine closes the group: Close cancels both mains, waits for the run
// to return and closes both loops. Each call's effect came back to its
// caller, but for at most the one in flight per main; no goroutine is
// left; Close returns nil.
func TestH44_GroupClosedWhileRunEachRuns(t *testing.T) {
	for k := 1; ; k++ {
		if k > 1000 {
			t.Fatal("the scenario did not complete within 1000 iterations")
		}
		var completed bool
		t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			defer func() {
				if err := goleak.Find(ignore); err != nil {
					t.Error(err)
				}
			}()
			g := NewLoopGroup(WithLoops(2))
			var effects, returned [2]atomic.Int64
			closeNow := make(chan struct{})
			iter := 0
			g.Loop(0).SetBeforePoll(func() {
				if iter++; iter == k {
					close(closeNow)
				}
			})
			closed := make(chan error, 1)
			go func() {
				<-closeNow
				closed <- g.Close()
			}()
			_, err := RunEach(g, func(tk *T, i int) (struct{}, error) {
				other := g.Loop(1 - i)
				for j := 0; j < 4; j++ {
					if _, err := CallOn(tk, other, func(tk *T) (int, error) {
						if err := Sleep(tk, 0); err != nil {
							return 0, err
						}
						effects[i].Add(1)
						return j, nil
					}); err != nil {
						return struct{}{}, err
					}
					returned[i].Add(1)
					if _, err := CallFuncOn(tk, other, func() (int, error) { effects[i].Add(1); return j, nil }); err != nil {
						return struct{}{}, err
					}
					returned[i].Add(1)
				}
				return struct{}{}, nil
			})
			completed = err == nil && iter < k
			if iter < k {
				close(closeNow) // the run ended first: close now
			}
			if cerr := <-closed; cerr != nil {
				t.Errorf("LoopGroup.Close: %v", cerr)
			}
			if err != nil && !errors.Is(err, ErrGroupCancelled) {
				t.Errorf("RunEach: %v, want the group's cancellation", err)
			}
			for i := range 2 {
				if !g.Loop(i).IsClosed() {
					t.Errorf("loop %d not closed", i)
				}
				e, r := effects[i].Load(), returned[i].Load()
				if e != r && e != r+1 {
					t.Errorf("main %d: %d effects, %d returned", i, e, r)
				}
				if completed && (e != 8 || r != 8) {
					t.Errorf("main %d completed with %d effects, %d returned", i, e, r)
				}
			}
		})
		if completed || t.Failed() {
			t.Logf("completed normally at k=%d", k)
			return
		}
	}
}
