package droppedcancel

import (
	"errors"
	"fmt"
	"log"

	"github.com/go-asyncio/asyncio"
)

// Cases of a hostile run of the check (2026-12-05).

// A cleanup await before the task returns its cancellation wrapped, which
// errors.Is and asyncio.IsCancelled still find: nothing is swallowed.
func cleanupThenWrap(t *asyncio.T, ev *asyncio.Event, q *asyncio.Queue[int]) error {
	err := ev.Wait(t)
	if asyncio.IsCancelled(err) {
		v, _ := q.Get(t)
		log.Print(v)
		return fmt.Errorf("waiting for %s: %w", "ev", err)
	}
	return err
}

func cleanupThenJoin(t *asyncio.T, ev *asyncio.Event, q *asyncio.Queue[int]) error {
	if err := ev.Wait(t); errors.Is(err, asyncio.ErrCancelled) {
		v, _ := q.Get(t)
		return errors.Join(fmt.Errorf("draining %d", v), err)
	}
	return nil
}

// Still reported: the cancellation is formatted with %v (errors.Is no
// longer finds it) or another error is the one wrapped.
func cleanupThenFormat(t *asyncio.T, ev *asyncio.Event, q *asyncio.Queue[int]) error {
	err := ev.Wait(t)
	if asyncio.IsCancelled(err) {
		v, _ := q.Get(t) // want `the error of asyncio.Queue.Get is assigned to _`
		log.Print(v)
		return fmt.Errorf("waiting: %v", err)
	}
	if asyncio.IsCancelled(err) {
		v, _ := q.Get(t) // want `the error of asyncio.Queue.Get is assigned to _`
		log.Print(v)
		return fmt.Errorf("%w: %v", asyncio.ErrTimeout, err)
	}
	return err
}

// err declared up front and then only checked and logged: the
// declaration is not a use.
func declaredUpFront(t *asyncio.T, q *asyncio.Queue[int]) {
	var err error
	var v int
	for {
		v, err = q.Get(t)
		if err != nil { // want `the error of asyncio.Queue.Get is checked but the branch only logs or continues`
			log.Print(err)
			continue
		}
		log.Print(v)
	}
}

// Not reported: declared with a value, or returned later.
func declaredAndReturned(t *asyncio.T, q *asyncio.Queue[int]) error {
	var err error
	for i := 0; i < 3; i++ {
		_, err = q.Get(t)
		if err != nil {
			log.Print(err)
			continue
		}
	}
	return err
}
