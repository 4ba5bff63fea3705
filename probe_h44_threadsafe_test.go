//go:build linux

package asyncio

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// RunCoroutineThreadsafe from foreign goroutines racing Close, at every
// moment: each goroutine submits coroutines (each one awaits Sleep(0) and
// then counts its effect) one after the other until a submission fails.
// Every ConcurrentFuture ends (a hang is the failure), with the value for
// exactly the coroutines that counted their effect, and an error wrapping
// ErrLoopClosed (or, through a Runner, a cancellation) for the others.
func TestH44_RunCoroutineThreadsafeRacingClose(t *testing.T) {
	h44CloseAtEach(t, 200, nil, func(tk *T, r *h44Run) error {
		l := tk.Loop()
		const goroutines, each = 3, 8
		var effects, values atomic.Int64
		all := NewFuture[struct{}](tk) // every coroutine took effect
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []error
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					cf := RunCoroutineThreadsafe(l, func(tk *T) (int, error) {
						if err := Sleep(tk, 0); err != nil {
							return 0, err
						}
						if effects.Add(1) == goroutines*each {
							all.SetResult(struct{}{})
						}
						return 1, nil
					})
					v, err := cf.Result()
					if err == nil {
						values.Add(int64(v))
						runtime.Gosched()
						continue
					}
					if !errors.Is(err, ErrLoopClosed) && !IsCancelled(err) {
						mu.Lock()
						bad = append(bad, err)
						mu.Unlock()
					}
					return
				}
			}()
		}
		r.onEnd(func(t *testing.T) {
			wg.Wait() // every Result returned
			if effects.Load() != values.Load() {
				t.Errorf("%d coroutines took effect, %d values came back", effects.Load(), values.Load())
			}
			for _, err := range bad {
				t.Errorf("a ConcurrentFuture ended with %v", err)
			}
		})
		// main waits for the coroutines of the foreign goroutines.
		_, err := all.Await(tk)
		return err
	})
}
