package asyncio

import (
	"errors"
	"testing"
)

// Cancelling the task in Spread cancels every task still running with
// the same message (as cancelling asyncio.gather's future passes its
// message to every child), also those it was not awaiting at the time.
func TestH5_SpreadCancelsEveryTaskWithTheMessage(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	msgs := NewCrossQueue[string](4)
	got := map[string]int{}
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		up := NewCrossQueue[int](4)
		spreader := CreateTask(tk, func(st *T) (struct{}, error) {
			_, err := Spread(st, g, 4, func(rt *T, i int) (int, error) {
				_ = up.PutNowait(i)
				_, err := NewFuture[int](rt).Await(rt)
				var ce *CancelledError
				if errors.As(err, &ce) {
					_ = msgs.PutNowait(ce.Msg)
				}
				return i, err
			})
			return struct{}{}, err
		})
		for range 4 { // every task runs and waits
			if _, err := up.Get(tk); err != nil {
				return struct{}{}, err
			}
		}
		spreader.Cancel("halt")
		if _, err := spreader.Await(tk); describe(err) != `CancelledError("halt")` {
			t.Errorf("Spread cancelled: %s", describe(err))
		}
		for range 4 {
			m, err := msgs.Get(tk)
			if err != nil {
				return struct{}{}, err
			}
			got[m]++
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got["halt"] != 4 {
		t.Errorf("the tasks' cancellation messages: %v; want \"halt\" for all 4", got)
	}
}

// Spread over the zero LoopGroup (no loops) is a *ValueError naming the
// mistake, before anything runs (it divided by zero).
func TestH5_SpreadOverTheZeroGroupIsAValueError(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		ran := false
		v := mustPanic(t, "Spread", func() {
			//asynciovet:ignore droppedcancel Spread panics before it awaits anything: there is no outcome
			_, _ = Spread(tk, &LoopGroup{}, 2, func(*T, int) (int, error) { ran = true; return 0, nil })
		})
		if !valueErrorPanic(v, "Spread: nil or zero group") || ran {
			t.Errorf("Spread over the zero group: panic %v, fn ran %v; want a *ValueError and nothing run", v, ran)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
