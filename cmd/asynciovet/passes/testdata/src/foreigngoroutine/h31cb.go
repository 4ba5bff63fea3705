package foreigngoroutine

import (
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
