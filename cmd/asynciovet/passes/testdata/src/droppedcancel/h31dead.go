package droppedcancel

import (
	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06): an await's error stored in
// a variable and then never read.

func readByNothing(t *asyncio.T, sem *asyncio.Semaphore) {
	err := sem.Acquire(t) // want `the error of asyncio.Semaphore.Acquire is assigned to err, which nothing reads`
	_ = err
	defer sem.Release()
}

func overwrittenNext(t *asyncio.T, ev *asyncio.Event) error {
	err := ev.Wait(t) // want `the error of asyncio.Event.Wait is assigned to err and overwritten by the next statement before anything reads it`
	err = other()
	return err
}

func other() error { return nil }

// Not reported: the next statement reads err, or a deferred literal may
// read it in between, or it is read later.
func overwrittenAfterRead(t *asyncio.T, ev *asyncio.Event) error {
	err := ev.Wait(t)
	err = wrap(err)
	return err
}

func wrap(err error) error { return err }

func capturedByDefer(t *asyncio.T, ev *asyncio.Event) (res error) {
	var err error
	defer func() { res = err }()
	err = ev.Wait(t)
	err = other()
	return nil
}

func readLater(t *asyncio.T, ev *asyncio.Event) error {
	err := ev.Wait(t)
	if err != nil {
		return err
	}
	err = other()
	return err
}
