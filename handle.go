package asyncio

import (
	"container/heap"
	"reflect"
	"runtime"
	"sync"
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
	when  time.Duration
	seq   uint64 // ties between equal deadlines run in scheduling order
	index int    // position in the timer heap
}

// When returns the absolute deadline on the loop's clock
// (asyncio.TimerHandle.when).
func (h *TimerHandle) When() time.Duration { return h.when }

// timerHeap is a min-heap of timers ordered by deadline, then by
// scheduling order. It implements container/heap.Interface.
type timerHeap []*TimerHandle

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*TimerHandle)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	t.inHeap = false
	return t
}

// compact removes every cancelled timer and restores the heap property.
func (h *timerHeap) compact() {
	live := (*h)[:0]
	for _, t := range *h {
		if t.cancelled {
			t.inHeap = false
			continue
		}
		live = append(live, t)
	}
	for i := len(live); i < len(*h); i++ {
		(*h)[i] = nil
	}
	*h = live
	for i, t := range live {
		t.index = i
	}
	heap.Init(h)
}

// readyEntry is one item of the ready queue: a user handle, an internal
// callback (done callbacks: no Handle is allocated for them), or a task
// step. A step with from != nil is the wakeup of a task that awaited from.
type readyEntry struct {
	handle *Handle
	fn     func()
	task   *T
	from   *futureCore
}

// readyQueue is the loop's FIFO of ready entries: a ring buffer that grows
// by doubling, so steady-state scheduling allocates nothing.
type readyQueue struct {
	buf  []readyEntry
	head int
	n    int
}

func (q *readyQueue) len() int { return q.n }

func (q *readyQueue) push(e readyEntry) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

func (q *readyQueue) pop() readyEntry {
	e := q.buf[q.head]
	q.buf[q.head] = readyEntry{}
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return e
}

// nextIsTask reports whether the entry pop would return is a task step.
func (q *readyQueue) nextIsTask() bool { return q.buf[q.head].task != nil }

func (q *readyQueue) grow() {
	size := 2 * len(q.buf)
	if size == 0 {
		size = 64
	}
	buf := make([]readyEntry, size)
	for i := 0; i < q.n; i++ {
		buf[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = buf, 0
}

func (q *readyQueue) clear() {
	for q.n > 0 {
		q.pop()
	}
}

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

var _ sync.Locker = (*sync.Mutex)(nil)
