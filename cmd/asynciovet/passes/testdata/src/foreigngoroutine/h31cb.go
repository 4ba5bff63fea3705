package foreigngoroutine

import (
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06): a goroutine started by a
// loop callback that a task schedules still races with the loop on the
// task's objects.
func goroutineFromACallback(t *asyncio.T) error {
	ev := asyncio.NewEvent()
	t.Loop().CallLater(time.Millisecond, func() {
		go func() {
			time.Sleep(time.Millisecond)
			ev.Set() // want `asyncio.Event.Set is called on ev from a goroutine started by the task`
		}()
	})
	return ev.Wait(t)
}

// Not reported: the goroutine hands the work back to the loop.
func goroutineFromACallbackThreadsafe(t *asyncio.T) error {
	ev := asyncio.NewEvent()
	l := t.Loop()
	l.CallSoon(func() {
		go func() {
			_, _ = l.CallSoonThreadsafe(ev.Set)
		}()
	})
	return ev.Wait(t)
}

// A method value given to time.AfterFunc or WaitGroup.Go runs on the
// timer's or the group's goroutine: a port of loop.call_later(d, ev.set)
// that took the wrong timer.
func methodValuesOffLoop(t *asyncio.T, wg *sync.WaitGroup) error {
	ev := asyncio.NewEvent()
	time.AfterFunc(time.Millisecond, ev.Set) // want `asyncio.Event.Set is called on ev from a function that time.AfterFunc runs on another goroutine`
	wg.Go(ev.Clear)                          // want `asyncio.Event.Clear is called on ev from a function that sync.WaitGroup.Go runs on another goroutine`
	l := t.Loop()
	time.AfterFunc(time.Millisecond, func() { _, _ = l.CallSoonThreadsafe(ev.Set) }) // the right way
	return ev.Wait(t)
}
