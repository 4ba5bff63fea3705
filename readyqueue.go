package asyncio

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
