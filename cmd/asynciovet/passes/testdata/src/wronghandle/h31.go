package wronghandle

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06).

// Retry runs fn inside the calling task with the caller's own handle, as
// WaitForFunc does: awaiting with either handle awaits with the same task.
func retried(t *asyncio.T) (int, error) {
	return asyncio.Retry(t, asyncio.RetryPolicy{MaxAttempts: 3}, func(attempt *asyncio.T, a asyncio.Attempt) (int, error) {
		return a.Number, asyncio.Sleep(t, time.Millisecond)
	})
}

// Hedge runs every attempt as a task of its own: the outer handle is
// another task's.
func hedged(t *asyncio.T) (int, error) {
	return asyncio.Hedge(t, asyncio.HedgePolicy{Delay: time.Millisecond}, func(_ *asyncio.T, i int) (int, error) {
		return i, asyncio.Sleep(t, time.Millisecond) // want `asyncio.Sleep awaits with t, the handle of an enclosing task, inside a task function whose own \*asyncio.T parameter is unnamed`
	})
}
