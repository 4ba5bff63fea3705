package droppedcancel

import (
	"log"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// Cases of the hostile probe h31 (2026-12-06): the cleanup in a deferred
// literal, Python's "finally: writer.close(); await writer.wait_closed()",
// is the deferred await (defer w.WaitClosed(t)) written out: the function
// is returning, so nothing carries on after a cancellation there.
func deferredCleanupLiteral(t *asyncio.T, w *aio.StreamWriter) error {
	defer func() {
		w.Close()
		_ = w.WaitClosed(t)
		if err := w.WaitClosed(t); err != nil {
			log.Print(err)
		}
	}()
	return w.Drain(t)
}

// Still reported: a loop inside the deferred literal goes on awaiting, and
// a literal that is only called, not deferred, is not cleanup.
func deferredLoop(t *asyncio.T, q *asyncio.Queue[int]) {
	defer func() {
		for q.Len() > 0 {
			_, _ = q.Get(t) // want `the error of asyncio.Queue.Get is assigned to _`
		}
	}()
	func() {
		_, _ = q.Get(t) // want `the error of asyncio.Queue.Get is assigned to _`
	}()
}
