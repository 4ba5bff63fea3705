package asyncio

import (
	"reflect"
	"runtime"
	"time"
	"unsafe"
)

// Handle is a callback scheduled on a loop (asyncio.Handle). Cancelling it
// before it runs keeps it from running; cancelling after it ran has no
// effect beyond Cancelled reporting true.
//
// A Handle is 16 bytes, so that CallSoon's slab of them costs the
// collector as little as it can: the loop, which only a threadsafe
// handle's or a pending timer's Cancel needs, is in the threadsafeHandle
// or TimerHandle around it (see owner).
type Handle struct {
	fn        func()
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
		l := h.owner()
		l.threadsafeMu.Lock()
		defer l.threadsafeMu.Unlock()
	}
	if h.cancelled {
		return
	}
	h.cancelled = true
	h.fn = nil // drop what the callback references, as asyncio does
	if h.inHeap {
		h.owner().cancelledTimers++
	}
}

// threadsafeHandle is a handle of CallSoonThreadsafe, whose Cancel takes
// its loop's threadsafe lock. Handle comes first: owner finds the loop
// from the *Handle.
type threadsafeHandle struct {
	Handle
	loop *Loop
}

// owner returns the loop of a threadsafe handle or of a TimerHandle, the
// only handles whose methods need it (a threadsafe handle is always in a
// threadsafeHandle, a handle in the timer heap always in a TimerHandle,
// each at offset 0).
func (h *Handle) owner() *Loop {
	if h.threadsafe {
		return (*threadsafeHandle)(unsafe.Pointer(h)).loop
	}
	return (*TimerHandle)(unsafe.Pointer(h)).loop
}

// Cancelled reports whether Cancel was called (asyncio.Handle.cancelled).
func (h *Handle) Cancelled() bool {
	if h.threadsafe {
		l := h.owner()
		l.threadsafeMu.Lock()
		defer l.threadsafeMu.Unlock()
	}
	return h.cancelled
}

// take returns the callback to run, or nil if the handle was cancelled.
// For a threadsafe handle the check happens under the lock, so a
// concurrent Cancel either wins entirely or has no effect (HANDLE-3).
func (h *Handle) take() func() {
	if h.threadsafe {
		l := h.owner()
		l.threadsafeMu.Lock()
		defer l.threadsafeMu.Unlock()
	}
	if h.cancelled {
		return nil
	}
	return h.fn
}

// TimerHandle is a callback scheduled for a deadline (asyncio.TimerHandle).
type TimerHandle struct {
	Handle
	loop *Loop
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
