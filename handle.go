package asyncio

import (
	"reflect"
	"runtime"
	"time"
)

// Handle is a callback scheduled on a loop (asyncio.Handle). Cancelling it
// before it runs keeps it from running; cancelling after it ran has no
// effect beyond Cancelled reporting true.
type Handle struct {
	fn        func()
	loop      *Loop
	cancelled bool
	// inHeap is set while a TimerHandle sits in the loop's timer heap, so
	// that Cancel can count it for lazy removal (LOOP-4).
	inHeap bool
	// threadsafe handles (CallSoonThreadsafe) serialise Cancel against
	// their run with the loop's threadsafe mutex (HANDLE-3).
	threadsafe bool
}

// Cancel keeps the callback from running if it has not run yet
// (asyncio.Handle.cancel). It is idempotent. Only a handle returned by
// CallSoonThreadsafe may be cancelled from another goroutine.
func (h *Handle) Cancel() {
	if h.threadsafe {
		h.loop.threadsafeMu.Lock()
		defer h.loop.threadsafeMu.Unlock()
	}
	if h.cancelled {
		return
	}
	h.cancelled = true
	h.fn = nil // drop what the callback references, as asyncio does
	if h.inHeap {
		h.loop.cancelledTimers++
	}
}

// Cancelled reports whether Cancel was called (asyncio.Handle.cancelled).
func (h *Handle) Cancelled() bool {
	if h.threadsafe {
		h.loop.threadsafeMu.Lock()
		defer h.loop.threadsafeMu.Unlock()
	}
	return h.cancelled
}

// take returns the callback to run, or nil if the handle was cancelled.
// For a threadsafe handle the check happens under the lock, so a
// concurrent Cancel either wins entirely or has no effect (HANDLE-3).
func (h *Handle) take() func() {
	if h.threadsafe {
		h.loop.threadsafeMu.Lock()
		defer h.loop.threadsafeMu.Unlock()
	}
	if h.cancelled {
		return nil
	}
	return h.fn
}

// TimerHandle is a callback scheduled for a deadline (asyncio.TimerHandle).
type TimerHandle struct {
	Handle
	when time.Duration
	seq  uint64 // ties between equal deadlines run in scheduling order
}

// When returns the absolute deadline on the loop's clock
// (asyncio.TimerHandle.when).
func (h *TimerHandle) When() time.Duration { return h.when }

// funcName names a callback for messages ("Exception in callback ...").
func funcName(fn func()) string {
	if fn == nil {
		return "<nil>"
	}
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		return f.Name()
	}
	return "<func>"
}
