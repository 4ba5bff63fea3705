package droppedcancel

import (
	"errors"
	"log"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06).

// A port of Python's "except Exception: log; continue", which a
// CancelledError (a BaseException) passes through: in Go nothing
// propagates the cancellation that the test keeps out of the branch.
func notCancelledFilter(t *asyncio.T, q *asyncio.Queue[int]) {
	for {
		v, err := q.Get(t)
		if err != nil && !asyncio.IsCancelled(err) { // want `the error of asyncio.Queue.Get is tested so that a cancellation skips the branch`
			log.Print(err)
			continue
		}
		log.Print(v)
	}
}

func notCancelledFilterIs(t *asyncio.T) error {
	for {
		if err := asyncio.Sleep(t, time.Second); !errors.Is(err, asyncio.ErrCancelled) && err != nil { // want `the error of asyncio.Sleep is tested so that a cancellation skips the branch`
			return err // a failure is returned, a cancellation is not
		}
	}
}

// Not reported: the cancellation is handled on another branch, or after.
func notCancelledFilterElse(t *asyncio.T, q *asyncio.Queue[int]) error {
	for {
		v, err := q.Get(t)
		if err != nil && !asyncio.IsCancelled(err) {
			log.Print(err)
			continue
		} else if err != nil {
			return err
		}
		log.Print(v)
	}
}

func notCancelledFilterAfter(t *asyncio.T, q *asyncio.Queue[int]) error {
	for {
		v, err := q.Get(t)
		if err != nil && !asyncio.IsCancelled(err) {
			log.Print(err)
			continue
		}
		if err != nil {
			return err
		}
		log.Print(v)
	}
}

// An || keeps the cancellation in the branch on one side: not judged.
func notCancelledOr(t *asyncio.T, q *asyncio.Queue[int], stop bool) error {
	_, err := q.Get(t)
	if stop || (err != nil && !asyncio.IsCancelled(err)) {
		return err
	}
	return nil
}

// Two loops that each swallow the errors of their awaits into one err:
// each is the other's only other reader.
func twoSwallowingLoops(t *asyncio.T, q *asyncio.Queue[int]) {
	var err error
	for {
		_, err = q.Get(t)
		if err != nil { // want `the error of asyncio.Queue.Get is checked but the branch only logs or continues`
			log.Print(err)
			continue
		}
		break
	}
	for {
		err = asyncio.Sleep(t, time.Second)
		if err != nil { // want `the error of asyncio.Sleep is checked but the branch only logs or continues`
			log.Print(err)
			continue
		}
		break
	}
	err = nil // a write, not a read
}

// Not reported: the second loop's err is returned.
func swallowThenReturn(t *asyncio.T, q *asyncio.Queue[int]) error {
	var err error
	for {
		_, err = q.Get(t)
		if err != nil {
			log.Print(err)
			continue
		}
		break
	}
	err = asyncio.Sleep(t, time.Second)
	return err
}

// Not reported: an await that relays another awaitable's outcome, here a
// task the caller cancelled itself, may rightly filter that cancellation.
func cancelThenAwait(t *asyncio.T, tk *asyncio.Task[int]) error {
	tk.Cancel()
	if _, err := tk.Await(t); err != nil && !asyncio.IsCancelled(err) {
		return err
	}
	if _, err := asyncio.WaitFor[int](t, time.Second, tk); err != nil && !asyncio.IsCancelled(err) {
		return err
	}
	return nil
}

// Not reported: without the nil test only a cancellation skips the
// branch, so what follows is the cancellation's own handler.
func cancellationHandledAfter(t *asyncio.T) error {
	err := asyncio.Sleep(t, time.Second)
	if !asyncio.IsCancelled(err) {
		return err
	}
	log.Print("cleaning up after a cancellation")
	return asyncio.Sleep(t, time.Millisecond)
}

// The same swallow written the other way round: the error's branch is
// the else, and it only logs.
func elseLogs(t *asyncio.T, q *asyncio.Queue[int]) {
	for {
		v, err := q.Get(t)
		if err == nil { // want `the error of asyncio.Queue.Get is checked but the branch only logs or continues`
			log.Print(v)
		} else {
			log.Print(err)
		}
	}
}

// Not reported: the else branch returns it.
func elseReturns(t *asyncio.T, q *asyncio.Queue[int]) error {
	for {
		v, err := q.Get(t)
		if err == nil {
			log.Print(v)
		} else {
			return err
		}
	}
}

// The filter and the cleanup branch written with errors.As.
func notCancelledFilterAs(t *asyncio.T, q *asyncio.Queue[int]) {
	var ce *asyncio.CancelledError
	for {
		v, err := q.Get(t)
		if err != nil && !errors.As(err, &ce) { // want `the error of asyncio.Queue.Get is tested so that a cancellation skips the branch`
			log.Print(err)
			continue
		}
		log.Print(v)
	}
}

func cleanupAs(t *asyncio.T, ev *asyncio.Event, q *asyncio.Queue[int]) error {
	var ce *asyncio.CancelledError
	if err := ev.Wait(t); errors.As(err, &ce) {
		_, _ = q.Get(t) // negative: the task returns the cancellation next
		return err
	}
	return nil
}
