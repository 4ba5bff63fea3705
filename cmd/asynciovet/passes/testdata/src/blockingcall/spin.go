package blockingcall

import (
	"context"

	"github.com/go-asyncio/asyncio"
)

// Positive: the loop only polls; it never awaits, so the loop runs
// nothing else until a value comes from another goroutine, and one a
// task would send never comes.
func pollingSpin(t *asyncio.T, ch chan int) (int, error) {
	for { // want `this loop only polls with select and default inside a task: it never awaits`
		select {
		case v := <-ch:
			return v, nil
		default:
		}
	}
}

// Positive: a labelled break and a continue in the default case change
// nothing.
func pollingSpinLabelled(t *asyncio.T, ch chan int, done <-chan struct{}) (int, error) {
	n := 0
loop:
	for { // want `this loop only polls with select and default inside a task`
		select {
		case v := <-ch:
			n += v
		case <-done:
			break loop
		default:
			continue
		}
	}
	return n, nil
}

// Positive: in a loop callback too.
func pollingCallback(l *asyncio.Loop, ch chan int) {
	l.CallSoon(func() {
		for { // want `this loop only polls with select and default inside a loop callback`
			select {
			case <-ch:
				return
			default:
			}
		}
	})
}

// Negative: an await in the default case gives the loop control.
func pollingYields(t *asyncio.T, ch chan int) (int, error) {
	for {
		select {
		case v := <-ch:
			return v, nil
		default:
			if err := asyncio.Sleep(t, 0); err != nil {
				return 0, err
			}
		}
	}
}

// Negative: a bounded number of polls.
func pollingBounded(t *asyncio.T, ch chan int) int {
	for i := 0; i < 3; i++ {
		select {
		case v := <-ch:
			return v
		default:
		}
	}
	return 0
}

// Negative: work in the default case (a CPU loop that checks for a stop
// now and then is another matter).
func pollingWorks(t *asyncio.T, stop chan struct{}, work func() bool) {
	for {
		select {
		case <-stop:
			return
		default:
			if !work() {
				return
			}
		}
	}
}

// Negative: other statements in the loop.
func pollingThenAwait(t *asyncio.T, ch chan int) error {
	for {
		select {
		case <-ch:
			return nil
		default:
		}
		if err := asyncio.Sleep(t, 0); err != nil {
			return err
		}
	}
}

// Negative: off the loop, in asyncio.Go's function.
func pollingOffLoop(t *asyncio.T, ch chan int) (int, error) {
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		for {
			select {
			case v := <-ch:
				return v, nil
			default:
			}
		}
	})
}
