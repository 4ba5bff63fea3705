package unawaitedtask

import (
	"github.com/go-asyncio/asyncio"
)

// Cases of the hostile probe h31 (2026-12-06): a deferred CreateTask drops
// the task as a statement does (schedule the cleanup on the way out, and
// nothing ever awaits it).
func deferredCreate(t *asyncio.T, cleanup func(*asyncio.T) (int, error)) error {
	defer asyncio.CreateTask(t.Loop(), cleanup) // want `the task started by CreateTask is never awaited`
	return nil
}

// Not reported: the deferred call keeps the task (it awaits it).
func deferredAwait(t *asyncio.T, tk *asyncio.Task[int]) {
	defer tk.Await(t)
}
