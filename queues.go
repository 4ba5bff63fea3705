package asyncio

import (
	"fmt"
	"strings"
)

// queueStore is the item container: FIFO, LIFO or heap (Queue._init/_put/_get).
type queueStore[V any] interface {
	put(v V)
	get() V
	len() int
	items() []V // in storage order, for the repr
}

type fifoStore[V any] struct {
	buf  []V
	head int
}

func (s *fifoStore[V]) put(v V)    { s.buf = append(s.buf, v) }
func (s *fifoStore[V]) len() int   { return len(s.buf) - s.head }
func (s *fifoStore[V]) items() []V { return s.buf[s.head:] }
func (s *fifoStore[V]) get() V {
	var zero V
	v := s.buf[s.head]
	s.buf[s.head] = zero // let the GC have it
	s.head++
	if s.head == len(s.buf) {
		s.buf, s.head = s.buf[:0], 0
	} else if s.head >= 32 && s.head*2 >= len(s.buf) {
		n := copy(s.buf, s.buf[s.head:])
		clear(s.buf[n:])
		s.buf, s.head = s.buf[:n], 0
	}
	return v
}

type lifoStore[V any] struct{ buf []V }

func (s *lifoStore[V]) put(v V)    { s.buf = append(s.buf, v) }
func (s *lifoStore[V]) len() int   { return len(s.buf) }
func (s *lifoStore[V]) items() []V { return s.buf }
func (s *lifoStore[V]) get() V {
	var zero V
	n := len(s.buf) - 1
	v := s.buf[n]
	s.buf[n] = zero
	s.buf = s.buf[:n]
	return v
}

// heapStore is a binary min-heap ordered by less, with heapq's own
// algorithm rather than container/heap's: both give the same order for
// distinct items, but items that tie come out in the order heapq gives
// (its pop sifts the last item down to a leaf, taking the right child on a
// tie, then back up), so a ported PriorityQueue of (priority, job) pairs
// that compare by priority only serves equal priorities as CPython does.
type heapStore[V any] struct {
	buf  []V
	less func(a, b V) bool
}

// put is heapq.heappush.
func (s *heapStore[V]) put(v V) {
	s.buf = append(s.buf, v)
	s.siftDown(0, len(s.buf)-1)
}

// get is heapq.heappop.
func (s *heapStore[V]) get() V {
	var zero V
	n := len(s.buf) - 1
	last := s.buf[n]
	s.buf[n] = zero
	s.buf = s.buf[:n]
	if n == 0 {
		return last
	}
	top := s.buf[0]
	s.buf[0] = last
	s.siftUp(0)
	return top
}

// siftDown is heapq._siftdown: the item at pos moves up towards start
// while it is less than its parent.
func (s *heapStore[V]) siftDown(start, pos int) {
	item := s.buf[pos]
	for pos > start {
		parent := (pos - 1) >> 1
		if !s.less(item, s.buf[parent]) {
			break
		}
		s.buf[pos] = s.buf[parent]
		pos = parent
	}
	s.buf[pos] = item
}

// siftUp is heapq._siftup: the item at pos goes down to a leaf along the
// smaller children (the right one unless the left is less), then
// siftDown puts it in place.
func (s *heapStore[V]) siftUp(pos int) {
	end, start, item := len(s.buf), pos, s.buf[pos]
	child := 2*pos + 1
	for child < end {
		if right := child + 1; right < end && !s.less(s.buf[child], s.buf[right]) {
			child = right
		}
		s.buf[pos] = s.buf[child]
		pos = child
		child = 2*pos + 1
	}
	s.buf[pos] = item
	s.siftDown(start, pos)
}

func (s *heapStore[V]) len() int   { return len(s.buf) }
func (s *heapStore[V]) items() []V { return s.buf }

// Queue ports asyncio.Queue, PriorityQueue and LifoQueue (QUEUE-1..7, with
// the 3.13 Shutdown). Create it with NewQueue, NewPriorityQueue or
// NewLifoQueue: the zero Queue has no store, and its methods (all but Cap
// and String) panic with a *ValueError that says so. It is not goroutine-safe: use it only from tasks and
// callbacks of one loop (it binds to the loop of the first task that waits).
type Queue[V any] struct {
	binding    loopBinding
	kind       string
	maxsize    int
	store      queueStore[V]
	getters    waiterQueue
	putters    waiterQueue
	unfinished int
	finished   *Event
	isShutdown bool
}

func newQueue[V any](kind string, maxsize int, store queueStore[V]) *Queue[V] {
	q := &Queue[V]{kind: kind, maxsize: maxsize, store: store, finished: NewEvent()}
	q.finished.Set()
	return q
}

// NewQueue returns a FIFO queue (asyncio.Queue(maxsize)); maxsize <= 0 means
// unbounded.
func NewQueue[V any](maxsize int) *Queue[V] {
	return newQueue[V]("Queue", maxsize, &fifoStore[V]{})
}

// NewPriorityQueue returns a queue that yields the smallest item according
// to less first (asyncio.PriorityQueue(maxsize), a heap; equal items come out
// in no particular order). less must not be nil.
func NewPriorityQueue[V any](maxsize int, less func(a, b V) bool) *Queue[V] {
	if less == nil {
		panic(&ValueError{Msg: "NewPriorityQueue: nil less function"})
	}
	return newQueue[V]("PriorityQueue", maxsize, &heapStore[V]{less: less})
}

// NewLifoQueue returns a queue that yields the newest item first
// (asyncio.LifoQueue(maxsize)).
func NewLifoQueue[V any](maxsize int) *Queue[V] {
	return newQueue[V]("LifoQueue", maxsize, &lifoStore[V]{})
}

// String returns a repr like `<Queue at 0x… maxsize=0 _queue=[1, 2] tasks=2>`
// (string items quoted as Python's repr quotes them: ['a', 'b c']).
func (q *Queue[V]) String() string {
	if q.store == nil {
		return fmt.Sprintf("<zero Queue at %p>", q)
	}
	s := "<" + q.identity()
	if q.store.len() > 0 {
		s += " _queue=" + pyList(q.store.items())
	}
	if n := q.getters.len(); n > 0 {
		s += fmt.Sprintf(" _getters[%d]", n)
	}
	if n := q.putters.len(); n > 0 {
		s += fmt.Sprintf(" _putters[%d]", n)
	}
	if q.unfinished > 0 {
		s += fmt.Sprintf(" tasks=%d", q.unfinished)
	}
	if q.isShutdown {
		s += " shutdown"
	}
	return s + ">"
}

// checkMade panics with a *ValueError naming op when q was not made by
// a constructor (the zero Queue), before op changes anything.
func (q *Queue[V]) checkMade(op string) {
	if q.store == nil {
		panic(valueErrorf("%s: zero Queue (make it with NewQueue, NewLifoQueue or NewPriorityQueue)", op))
	}
}

// checkCaller is loopBinding.checkCaller for the queue and the Event its
// Join waits on (a task that joined binds that one only).
func (q *Queue[V]) checkCaller(op string) {
	q.binding.checkCaller(op)
	q.finished.binding.checkCaller(op)
}

func (q *Queue[V]) identity() string { return fmt.Sprintf("%s at %p maxsize=%d", q.kind, q, q.maxsize) }

// Len returns the number of items in the queue (asyncio's qsize()).
func (q *Queue[V]) Len() int { q.checkMade("Queue.Len"); return q.store.len() }

// Cap returns the maximum number of items, maxsize (<= 0: unbounded).
func (q *Queue[V]) Cap() int { return q.maxsize }

// Empty reports whether the queue holds no items.
func (q *Queue[V]) Empty() bool { q.checkMade("Queue.Empty"); return q.store.len() == 0 }

// Full reports whether the queue holds maxsize items; always false when
// unbounded (QUEUE-1).
func (q *Queue[V]) Full() bool {
	q.checkMade("Queue.Full")
	return q.maxsize > 0 && q.store.len() >= q.maxsize
}

// Put ports Queue.put: while the queue is full it waits for a free slot,
// re-checking after every wake-up, then calls PutNowait (QUEUE-3). If the
// queue is (or gets) shut down it returns ErrQueueShutDown (QUEUE-7). A put
// cancelled after being woken passes the wake-up to the next putter (QUEUE-4).
func (q *Queue[V]) Put(t *T, v V) error {
	q.checkMade("Queue.Put")
	t.checkRunning("Queue.Put")
	for q.Full() {
		if q.isShutdown {
			return ErrQueueShutDown
		}
		if err := q.binding.bind(t.Loop(), q); err != nil {
			return err
		}
		if err := q.putters.await(t, kindQueuePut, func() bool { return !q.Full() }); err != nil {
			return err
		}
	}
	return q.PutNowait(v)
}

// PutNowait ports Queue.put_nowait: it stores v, counts one unfinished task
// and wakes the first live getter (QUEUE-2). It returns ErrQueueShutDown after
// Shutdown and ErrQueueFull when the queue is full.
func (q *Queue[V]) PutNowait(v V) error {
	q.checkMade("Queue.PutNowait")
	q.checkCaller("Queue.PutNowait")
	if q.isShutdown {
		return ErrQueueShutDown
	}
	if q.Full() {
		return ErrQueueFull
	}
	q.store.put(v)
	q.unfinished++
	q.finished.Clear()
	q.getters.wakeNext()
	return nil
}

// Get ports Queue.get: while the queue is empty it waits for an item,
// re-checking after every wake-up (so a synchronous GetNowait can take the
// item first and the woken getter waits again at the back, QUEUE-3), then
// calls GetNowait. It returns ErrQueueShutDown once the queue is shut down
// and empty (QUEUE-7). A get cancelled after being woken passes the wake-up
// to the next getter (QUEUE-4).
func (q *Queue[V]) Get(t *T) (V, error) {
	q.checkMade("Queue.Get")
	t.checkRunning("Queue.Get")
	var zero V
	for q.Empty() {
		if q.isShutdown {
			return zero, ErrQueueShutDown
		}
		if err := q.binding.bind(t.Loop(), q); err != nil {
			return zero, err
		}
		if err := q.getters.await(t, kindQueueGet, func() bool { return !q.Empty() }); err != nil {
			return zero, err
		}
	}
	return q.GetNowait()
}

// GetNowait ports Queue.get_nowait: it removes and returns an item and wakes
// the first live putter (QUEUE-2). On an empty queue it returns
// ErrQueueShutDown after Shutdown, else ErrQueueEmpty.
func (q *Queue[V]) GetNowait() (V, error) {
	q.checkMade("Queue.GetNowait")
	q.checkCaller("Queue.GetNowait")
	if q.Empty() {
		var zero V
		if q.isShutdown {
			return zero, ErrQueueShutDown
		}
		return zero, ErrQueueEmpty
	}
	v := q.store.get()
	q.putters.wakeNext()
	return v, nil
}

// TaskDone ports Queue.task_done: it marks one fetched item as processed and
// releases Join waiters when none are left unfinished. Calling it more often
// than items were put returns *ValueError "task_done() called too many times"
// (QUEUE-5).
func (q *Queue[V]) TaskDone() error {
	q.checkMade("Queue.TaskDone")
	q.checkCaller("Queue.TaskDone")
	if q.unfinished <= 0 {
		return &ValueError{Msg: "task_done() called too many times"}
	}
	q.unfinished--
	if q.unfinished == 0 {
		q.finished.Set()
	}
	return nil
}

// Join ports Queue.join: it waits until every item put has been marked with
// TaskDone; it returns at once when nothing is unfinished (QUEUE-5).
func (q *Queue[V]) Join(t *T) error {
	q.checkMade("Queue.Join")
	t.checkRunning("Queue.Join")
	if q.unfinished > 0 {
		return q.finished.Wait(t)
	}
	return nil
}

// Shutdown ports Queue.shutdown (3.13, QUEUE-7): afterwards Put/PutNowait
// return ErrQueueShutDown, and Get/GetNowait do so once the queue is empty.
// Blocked putters and getters are woken to re-check. With immediate the
// queued items are discarded, each one counted as done (never below 0), so
// Join waiters are released when nothing is left unfinished.
func (q *Queue[V]) Shutdown(immediate bool) {
	q.checkMade("Queue.Shutdown")
	q.checkCaller("Queue.Shutdown")
	q.isShutdown = true
	if immediate {
		for !q.Empty() {
			q.store.get()
			if q.unfinished > 0 {
				q.unfinished--
			}
		}
		if q.unfinished == 0 {
			q.finished.Set()
		}
	}
	for f := q.getters.popFront(); f != nil; f = q.getters.popFront() {
		if !f.Done() {
			_ = f.SetResult(struct{}{})
		}
	}
	for f := q.putters.popFront(); f != nil; f = q.putters.popFront() {
		if !f.Done() {
			_ = f.SetResult(struct{}{})
		}
	}
}

// pyList formats items as Python prints a list: [1, 2, 3], ['a', 'b'].
func pyList[V any](items []V) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		if str, ok := any(it).(string); ok {
			b.WriteString(pyQuote(str))
		} else {
			fmt.Fprint(&b, it)
		}
	}
	b.WriteByte(']')
	return b.String()
}
