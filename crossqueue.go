package asyncio

// A bounded queue between loops, for pipelines across a LoopGroup:
// producer tasks on one loop, consumer tasks on another. The queue's state
// is under a mutex (it is the one thing the loops share); a waiting task
// is woken through its own loop's CallSoonThreadsafe and moves its item
// when it resumes, as in asyncio, with the item or slot it was woken for
// promised to it meanwhile, in FIFO order, so no task barges past one that
// waits and a cancellation never loses or doubles an item.

import (
	"sync"
)

// CrossQueue is a bounded FIFO queue that tasks on any loops may share
// (asyncio.Queue's interface, safe between loops): Put suspends the
// calling task while the queue is full, Get while it is empty, each on its
// own loop only. PutNowait, GetNowait, Len, Cap and Shutdown may be called
// from any goroutine.
//
// As in asyncio, an item moves only when the task that puts or gets it
// runs: a waiting Get is woken when an item arrives and takes it when it
// resumes on its loop, a waiting Put is woken when a slot frees and puts
// its item when it resumes. Until then the item (or the slot) is promised
// to that waiter, so no later caller barges past it. A waiter cancelled
// after it was woken but before it resumed gets the *CancelledError, as
// asyncio's await of an already completed future does, and passes the
// item or slot on to the next waiter: nothing is lost, nothing is put
// twice.
//
// TaskDone and Join are asyncio.Queue's task_done and join: every item
// put counts as unfinished until a TaskDone for it, and Join suspends the
// calling task, on any loop, until none is.
//
// A task waiting in Put, Get or Join counts as outside work for its loop: on
// virtual time the loop waits for the other side instead of reporting
// ErrDeadlock, and its clock does not move meanwhile (a Timeout around a
// waiting Get does not expire until the other side acts; the stall report
// names the wait after a grace period).
type CrossQueue[V any] struct {
	mu       sync.Mutex
	items    []V // a ring, grown as needed up to capacity slots
	head, n  int
	capacity int
	shutdown bool
	// promisedItems of the items at the front are promised to getters
	// woken but not resumed yet, promisedSlots of the free slots to
	// putters likewise: a caller that does not wait sees only the rest.
	promisedItems, promisedSlots int
	// epoch counts immediate Shutdowns, which discard the promised items
	// too: a getter woken in an earlier epoch finds its item gone.
	epoch   uint64
	getters []*crossWaiter[V]
	putters []*crossWaiter[V]
	// unfinished counts the items put and not yet marked done by
	// TaskDone (asyncio's _unfinished_tasks); joiners wait for it to be
	// 0 (asyncio's _finished event).
	unfinished int
	joiners    []*crossWaiter[V]
}

// crossWaiter is one task waiting in Put, Get or Join.
type crossWaiter[V any] struct {
	loop  *Loop
	fut   *Future[struct{}] // on loop: completed when the waiter is woken
	role  crossRole
	v     V      // a putter's item
	state int    // guarded by the queue's mu
	err   error  // ErrQueueShutDown when a Shutdown woke it
	epoch uint64 // the queue's epoch when it was woken
	// A cancellation that came after w was woken (w's loop only): it
	// wins when w resumes, as asyncio's does.
	cancel heldCancel
}

// crossRole is what a crossWaiter waits for.
type crossRole uint8

const (
	crossPutter crossRole = iota // a slot, then puts its item
	crossGetter                  // an item, then takes it
	crossJoiner                  // no unfinished items: nothing is promised to it
)

const (
	waiterWaiting = iota
	waiterWoken   // its wakeup is on the way to its loop
	waiterGone    // done, cancelled, or its loop closed
)

// NewCrossQueue returns an empty queue holding at most capacity items.
// capacity < 1 panics with a *ValueError: a cross-loop queue is bounded,
// so that a fast producer feels the consumer's pace (backpressure).
func NewCrossQueue[V any](capacity int) *CrossQueue[V] {
	if capacity < 1 {
		panic(valueErrorf("NewCrossQueue: capacity %d (want at least 1)", capacity))
	}
	// The ring grows with use: a huge capacity (a producer that should
	// practically never wait) costs nothing up front.
	return &CrossQueue[V]{items: make([]V, min(capacity, initialCrossQueueRing)), capacity: capacity}
}

// initialCrossQueueRing is the ring's first size when the capacity is
// larger.
const initialCrossQueueRing = 16

// checkMade panics with a *ValueError, before any change, when q was not
// made by NewCrossQueue: the zero CrossQueue has no capacity, so a Put
// would wait for ever and PutNowait would report a full queue.
func (q *CrossQueue[V]) checkMade(op string) {
	if q == nil || q.capacity == 0 {
		panic(valueErrorf("%s: nil or zero CrossQueue (make it with NewCrossQueue(capacity))", op))
	}
}

// Cap returns the queue's capacity (asyncio's maxsize).
func (q *CrossQueue[V]) Cap() int { return q.capacity }

// Len returns the number of items in the queue (asyncio's qsize),
// counting those promised to woken getters.
func (q *CrossQueue[V]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// push appends v, which counts as unfinished until its TaskDone; the
// caller checked there is room. q.mu is held.
func (q *CrossQueue[V]) push(v V) {
	if q.n == len(q.items) {
		q.grow()
	}
	q.items[(q.head+q.n)%len(q.items)] = v
	q.n++
	q.unfinished++
}

// grow doubles the ring (up to capacity), keeping the items in order.
// q.mu is held.
func (q *CrossQueue[V]) grow() {
	size := q.capacity
	if len(q.items) <= q.capacity/2 {
		size = 2 * len(q.items)
	}
	items := make([]V, size)
	k := copy(items, q.items[q.head:])
	copy(items[k:], q.items[:q.head])
	q.items, q.head = items, 0
}

// pop removes the first item; the caller checked there is one. q.mu is
// held.
func (q *CrossQueue[V]) pop() V {
	var zero V
	v := q.items[q.head]
	q.items[q.head] = zero
	q.head = (q.head + 1) % len(q.items)
	q.n--
	return v
}

// wake sends w its wakeup through its loop, with err (nil: its item or
// slot is promised). It reports false when the loop is closed: w is then
// gone and the caller tries the next waiter. q.mu is held.
func (q *CrossQueue[V]) wake(w *crossWaiter[V], err error) bool {
	w.state, w.err, w.epoch = waiterWoken, err, q.epoch
	_, cerr := w.loop.CallSoonThreadsafe(func() {
		if w.fut.state != statePending {
			return
		}
		w.loop.addExternal(-1)
		w.fut.finish(nil)
	})
	if cerr != nil {
		w.state = waiterGone
		return false
	}
	return true
}

// wakeGetters promises the items nobody was promised yet to the first
// waiting getters. q.mu is held.
func (q *CrossQueue[V]) wakeGetters() {
	for len(q.getters) > 0 && q.n > q.promisedItems {
		w := q.getters[0]
		q.getters = q.getters[1:]
		if q.wake(w, nil) {
			q.promisedItems++
		}
	}
}

// wakePutters promises the free slots nobody was promised yet to the
// first waiting putters. q.mu is held.
func (q *CrossQueue[V]) wakePutters() {
	for len(q.putters) > 0 && q.capacity-q.n > q.promisedSlots {
		w := q.putters[0]
		q.putters = q.putters[1:]
		if q.wake(w, nil) {
			q.promisedSlots++
		}
	}
}

// putLocked puts v if a slot is free and promised to nobody, and wakes a
// waiting getter for it. It reports false when the queue is full. q.mu is
// held.
func (q *CrossQueue[V]) putLocked(v V) bool {
	if q.capacity-q.n <= q.promisedSlots {
		return false
	}
	q.push(v)
	q.wakeGetters()
	return true
}

// getLocked takes the first item if one is promised to nobody, and wakes
// a waiting putter for the slot. It reports false when the queue is
// empty. q.mu is held.
func (q *CrossQueue[V]) getLocked() (V, bool) {
	if q.n <= q.promisedItems {
		var zero V
		return zero, false
	}
	v := q.pop()
	q.wakePutters()
	q.failGettersIfDrained()
	return v, true
}

// PutNowait puts v without waiting (asyncio's put_nowait): ErrQueueFull
// when the queue is full, ErrQueueShutDown after Shutdown. Any goroutine.
// Put, Get, PutNowait, GetNowait, TaskDone and Join on a queue not made
// by NewCrossQueue (nil, or the zero CrossQueue) panic with a *ValueError.
func (q *CrossQueue[V]) PutNowait(v V) error {
	q.checkMade("CrossQueue.PutNowait")
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return ErrQueueShutDown
	}
	if !q.putLocked(v) {
		return ErrQueueFull
	}
	return nil
}

// GetNowait takes the first item without waiting (asyncio's get_nowait):
// ErrQueueEmpty when the queue is empty, ErrQueueShutDown when it is also
// shut down. Any goroutine.
func (q *CrossQueue[V]) GetNowait() (V, error) {
	q.checkMade("CrossQueue.GetNowait")
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.getLocked()
	if !ok {
		if q.shutdown && q.n == 0 {
			return v, ErrQueueShutDown
		}
		return v, ErrQueueEmpty // (the items left are promised to woken getters)
	}
	return v, nil
}

// Put puts v, suspending the running task t while the queue is full
// (asyncio's Queue.put). It returns ErrQueueShutDown after Shutdown (also
// for a Put waiting when Shutdown is called: its item is not put), and a
// *CancelledError when t is cancelled before the item is put: while
// waiting, or after a slot was promised to it but before it resumed (the
// slot goes to the next putter).
func (q *CrossQueue[V]) Put(t *T, v V) error {
	q.checkMade("CrossQueue.Put")
	t.checkRunning("CrossQueue.Put")
	q.mu.Lock()
	if q.shutdown {
		q.mu.Unlock()
		return ErrQueueShutDown
	}
	if q.putLocked(v) {
		q.mu.Unlock()
		return nil
	}
	w := q.newWaiter(t, kindQueuePut)
	w.role, w.v = crossPutter, v
	q.putters = append(q.putters, w)
	q.mu.Unlock()
	_, err := q.wait(t, w)
	return err
}

// Get takes the first item, suspending the running task t while the queue
// is empty (asyncio's Queue.get). It returns ErrQueueShutDown when the
// queue is shut down and empty, and a *CancelledError when t is cancelled
// before it took an item: while waiting, or after an item was promised to
// it but before it resumed (the item stays first in the queue, for the
// next getter).
func (q *CrossQueue[V]) Get(t *T) (V, error) {
	q.checkMade("CrossQueue.Get")
	t.checkRunning("CrossQueue.Get")
	q.mu.Lock()
	if v, ok := q.getLocked(); ok {
		q.mu.Unlock()
		return v, nil
	}
	if q.shutdown && q.n == 0 {
		q.mu.Unlock()
		var zero V
		return zero, ErrQueueShutDown
	}
	// Empty, or every item left is promised to a woken getter, which may
	// yet pass it on: wait (also after a Shutdown, for those items).
	w := q.newWaiter(t, kindQueueGet)
	w.role = crossGetter
	q.getters = append(q.getters, w)
	q.mu.Unlock()
	return q.wait(t, w)
}

// newWaiter makes t's waiter, its future cancellable the queue's way: a
// waiter still waiting leaves its list and is cancelled; one already
// woken stays pending until its wakeup arrives (it is on its way), and
// the cancellation is delivered then. q.mu is held.
func (q *CrossQueue[V]) newWaiter(t *T, kind futureKind) *crossWaiter[V] {
	l := t.fut.loop
	w := &crossWaiter[V]{loop: l}
	fut := &Future[struct{}]{futureCore: futureCore{loop: l, kind: kind}}
	fut.setOps(nil, cancelFunc(func(msg string) bool {
		if fut.state != statePending {
			return false
		}
		q.mu.Lock()
		waiting := w.state == waiterWaiting
		if waiting {
			w.state = waiterGone
			q.unlist(w)
		}
		q.mu.Unlock()
		if !waiting {
			w.cancel.hold(msg)
			return true // the wakeup is on its way
		}
		l.addExternal(-1)
		return fut.cancelPlain(msg)
	}))
	w.fut = fut
	l.addExternal(1)
	return w
}

// wait awaits w's wakeup and then puts or gets (a joiner just returns):
// a cancellation that came after the wakeup wins (the promise passes to
// the next waiter). A task unwound by its loop's Close while it waits
// leaves the queue, and passes on what was promised to it.
func (q *CrossQueue[V]) wait(t *T, w *crossWaiter[V]) (V, error) {
	defer q.abandon(w)
	var zero V
	if _, err := w.fut.Await(t); err != nil {
		return zero, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := w.cancel.instead(t); err != nil {
		q.release(w)
		return zero, err
	}
	if w.err != nil {
		w.state = waiterGone
		return zero, w.err
	}
	w.state = waiterGone
	switch w.role {
	case crossJoiner:
		return zero, nil
	case crossGetter:
		if w.epoch != q.epoch { // an immediate Shutdown discarded it
			return zero, ErrQueueShutDown
		}
		q.promisedItems--
		v := q.pop()
		q.wakePutters()
		q.failGettersIfDrained()
		return v, nil
	}
	q.promisedSlots--
	if q.shutdown {
		return zero, ErrQueueShutDown
	}
	q.push(w.v)
	q.wakeGetters()
	return zero, nil
}

// release gives up what a woken waiter was promised, for the next waiter.
// q.mu is held.
func (q *CrossQueue[V]) release(w *crossWaiter[V]) {
	woken := w.state == waiterWoken && w.err == nil
	w.state = waiterGone
	switch {
	case !woken || w.role == crossJoiner: // nothing was promised to it
	case w.role == crossGetter:
		if w.epoch == q.epoch {
			q.promisedItems--
			q.wakeGetters()
		}
	default:
		q.promisedSlots--
		q.wakePutters()
	}
}

// abandon runs when Put, Get or Join returns or its task is unwound: a
// waiter still listed (its loop is closing) leaves the queue, and one
// woken but never resumed passes its promise on.
func (q *CrossQueue[V]) abandon(w *crossWaiter[V]) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.state == waiterWaiting {
		q.unlist(w)
	}
	q.release(w)
}

// unlist removes a waiting w from its list. q.mu is held.
func (q *CrossQueue[V]) unlist(w *crossWaiter[V]) {
	switch w.role {
	case crossGetter:
		q.getters = removeWaiter(q.getters, w)
	case crossPutter:
		q.putters = removeWaiter(q.putters, w)
	case crossJoiner:
		q.joiners = removeWaiter(q.joiners, w)
	}
}

func removeWaiter[V any](ws []*crossWaiter[V], w *crossWaiter[V]) []*crossWaiter[V] {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}

// Shutdown shuts the queue down (asyncio's Queue.shutdown, 3.13): Put and
// PutNowait fail with ErrQueueShutDown from now on, and so do the Puts
// waiting now (their items are not put); Get goes on returning the items
// left and then fails with ErrQueueShutDown, as the Gets waiting then do
// (a Get waits only while every item left is promised to a woken getter,
// which may still pass it on). With immediate, the items left are
// discarded too, each one counted as done (as by TaskDone, never below
// 0), so that Join returns once nothing is left unfinished. Any goroutine
// may call it; it is idempotent.
func (q *CrossQueue[V]) Shutdown(immediate bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	if immediate {
		for q.n > 0 {
			q.pop()
			if q.unfinished > 0 {
				q.unfinished--
			}
		}
		q.promisedItems = 0
		q.epoch++
		if q.unfinished == 0 {
			q.wakeJoiners()
		}
	}
	for _, w := range q.putters {
		q.wake(w, ErrQueueShutDown)
	}
	q.putters = nil
	q.failGettersIfDrained()
}

// failGettersIfDrained fails the waiting getters with ErrQueueShutDown
// once the queue is shut down and empty: until then an item promised to
// a woken getter may still pass to one of them. q.mu is held.
func (q *CrossQueue[V]) failGettersIfDrained() {
	if !q.shutdown || q.n > 0 {
		return
	}
	for _, w := range q.getters {
		q.wake(w, ErrQueueShutDown)
	}
	q.getters = nil
}

// TaskDone marks one item taken from the queue as processed (asyncio's
// Queue.task_done): each Put or PutNowait counts an unfinished item, each
// TaskDone one less, and when none is left every task waiting in Join is
// woken. Called more times than items were put, it returns a
// *ValueError "task_done() called too many times" and changes nothing.
// Any goroutine.
func (q *CrossQueue[V]) TaskDone() error {
	q.checkMade("CrossQueue.TaskDone")
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.unfinished <= 0 {
		return &ValueError{Msg: "task_done() called too many times"}
	}
	q.unfinished--
	if q.unfinished == 0 {
		q.wakeJoiners()
	}
	return nil
}

// Join suspends the running task t, on any loop, until every item put has
// been marked done with TaskDone (asyncio's Queue.join); it returns at
// once when none is unfinished. As with asyncio's, a Join woken because
// the count reached 0 returns nil even if items were put again before it
// resumed. It returns a *CancelledError when t is cancelled before it
// resumed (a cancelled Join leaves nothing behind in the queue).
func (q *CrossQueue[V]) Join(t *T) error {
	q.checkMade("CrossQueue.Join")
	t.checkRunning("CrossQueue.Join")
	q.mu.Lock()
	if q.unfinished == 0 {
		q.mu.Unlock()
		return nil
	}
	w := q.newWaiter(t, kindQueueJoin)
	w.role = crossJoiner
	q.joiners = append(q.joiners, w)
	q.mu.Unlock()
	_, err := q.wait(t, w)
	return err
}

// wakeJoiners wakes every task waiting in Join: nothing is unfinished.
// q.mu is held.
func (q *CrossQueue[V]) wakeJoiners() {
	for _, w := range q.joiners {
		q.wake(w, nil)
	}
	q.joiners = nil
}
