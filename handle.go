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

// timerHeap is a 4-ary min-heap of timers ordered by deadline, then by
// scheduling order. Each slot carries its timer's sort key, so sifting
// compares slots in one contiguous array instead of chasing a pointer to
// every TimerHandle (the cache misses of that chase were most of the cost
// of firing many timers), and the four children of a node share one or
// two cache lines while the tree is half as deep as a binary heap.
type timerHeap []timerSlot

type timerSlot struct {
	when time.Duration
	seq  uint64
	t    *TimerHandle
}

func (a *timerSlot) before(b *timerSlot) bool {
	if a.when != b.when {
		return a.when < b.when
	}
	return a.seq < b.seq
}

// first returns the earliest timer; the heap must not be empty.
func (h timerHeap) first() *TimerHandle { return h[0].t }

// push adds t.
func (h *timerHeap) push(t *TimerHandle) {
	*h = append(*h, timerSlot{when: t.when, seq: t.seq, t: t})
	h.up(len(*h) - 1)
}

// pop removes and returns the earliest timer, which leaves the heap.
func (h *timerHeap) pop() *TimerHandle {
	old := *h
	n := len(old) - 1
	t := old[0].t
	old[0] = old[n]
	old[n] = timerSlot{}
	*h = old[:n]
	if n > 1 {
		h.down(0)
	}
	t.inHeap = false
	return t
}

func (h timerHeap) up(i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

func (h timerHeap) down(i int) {
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The smallest of the (up to four) children.
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}

// compact removes every cancelled timer and restores the heap property.
func (h *timerHeap) compact() {
	live := (*h)[:0]
	for _, s := range *h {
		if s.t.cancelled {
			s.t.inHeap = false
			continue
		}
		live = append(live, s)
	}
	clear((*h)[len(live):])
	*h = live
	// Heapify from the last parent down; an empty or one-element heap has
	// none ((0-2)/4 truncates to 0 in Go, so the guard is needed).
	for i := (len(live) - 2) / 4; len(live) > 1 && i >= 0; i-- {
		live.down(i)
	}
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

// peek returns the entry pop would return, leaving it in place.
func (q *readyQueue) peek() *readyEntry { return &q.buf[q.head] }

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
