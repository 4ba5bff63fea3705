package asyncio

import "unsafe"

// readyEntry is one item of the ready queue: a user handle, an internal
// callback (done callbacks: no Handle is allocated for them), or a task
// step, possibly the wakeup of a task that awaited a future. It is two
// words, so that a push or pop moves 16 bytes (CallSoon and every task
// switch pass through here): p is the *Handle, the func's code pointer or
// the *T, and tag says which (the address of a sentinel), or, for a
// step, is the future the task awaited.
type readyEntry struct {
	p   unsafe.Pointer
	tag *futureCore
}

// The sentinels whose addresses tag an entry; never used as futures.
var tagHandle, tagFunc, tagStep futureCore

func handleEntry(h *Handle) readyEntry { return readyEntry{unsafe.Pointer(h), &tagHandle} }

// funcEntry stores fn's func value, which is a pointer to its closure.
func funcEntry(fn func()) readyEntry {
	return readyEntry{*(*unsafe.Pointer)(unsafe.Pointer(&fn)), &tagFunc}
}

// stepEntry is a step of t; from, when not nil, is the future whose
// completion woke t.
func stepEntry(t *T, from *futureCore) readyEntry {
	if from == nil {
		from = &tagStep
	}
	return readyEntry{unsafe.Pointer(t), from}
}

// isStep reports whether e is a task step.
func (e *readyEntry) isStep() bool { return e.tag != &tagHandle && e.tag != &tagFunc }

// task returns the task of a step entry.
func (e *readyEntry) task() *T { return (*T)(e.p) }

// from returns the future that woke the task of a step entry, or nil.
func (e *readyEntry) from() *futureCore {
	if e.tag == &tagStep {
		return nil
	}
	return e.tag
}

// handle returns the *Handle of a handle entry, nil for any other.
func (e *readyEntry) handle() *Handle {
	if e.tag != &tagHandle {
		return nil
	}
	return (*Handle)(e.p)
}

// fn returns the callback of a func entry.
func (e *readyEntry) fn() func() { return *(*func())(unsafe.Pointer(&e.p)) }

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
func (q *readyQueue) nextIsTask() bool { return q.buf[q.head].isStep() }

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
