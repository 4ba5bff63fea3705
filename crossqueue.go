package asyncio

// A bounded queue between loops, for pipelines across a LoopGroup:
// producer tasks on one loop, consumer tasks on another. The queue's state
// is under a mutex (it is the one thing the loops share); a waiting task
// is woken through its own loop's CallSoonThreadsafe, and an item or a
// free slot is handed to the first waiter directly, in FIFO order, so no
// task barges past one that waits.

import (
	"sync"
)

// CrossQueue is a bounded FIFO queue that tasks on any loops may share
// (asyncio.Queue's interface, safe between loops): Put suspends the
// calling task while the queue is full, Get while it is empty, each on its
// own loop only. PutNowait, GetNowait, Len, Cap and Shutdown may be called
// from any goroutine.
//
// A task waiting in Put or Get counts as outside work for its loop: on
// virtual time the loop waits for the other side instead of reporting
// ErrDeadlock.
type CrossQueue[V any] struct {
	mu       sync.Mutex
	items    []V // a ring of cap slots
	head, n  int
	shutdown bool
	getters  []*crossWaiter[V]
	putters  []*crossWaiter[V]
}

// crossWaiter is one task waiting in Put or Get.
type crossWaiter[V any] struct {
	loop   *Loop
	fut    *Future[V] // on loop
	getter bool
	v      V     // a putter's item, or the item handed to a getter
	state  int   // guarded by the queue's mu
	err    error // the outcome when state is waiterServed by a shutdown
	// A cancellation that came after w was served (w's loop only): it is
	// delivered at the task's next await.
	cancelAsked bool
	cancelMsg   string
}

const (
	waiterWaiting = iota
	waiterServed  // its outcome is on the way to its loop
	waiterGone    // cancelled, or its loop closed
)

// NewCrossQueue returns an empty queue holding at most capacity items.
// capacity < 1 panics with a *ValueError: a cross-loop queue is bounded,
// so that a fast producer feels the consumer's pace (backpressure).
func NewCrossQueue[V any](capacity int) *CrossQueue[V] {
	if capacity < 1 {
		panic(valueErrorf("NewCrossQueue: capacity %d (want at least 1)", capacity))
	}
	return &CrossQueue[V]{items: make([]V, capacity)}
}

// Cap returns the queue's capacity (asyncio's maxsize).
func (q *CrossQueue[V]) Cap() int { return len(q.items) }

// Len returns the number of items in the queue (asyncio's qsize).
func (q *CrossQueue[V]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

// push appends v; the caller checked there is room. q.mu is held.
func (q *CrossQueue[V]) push(v V) {
	q.items[(q.head+q.n)%len(q.items)] = v
	q.n++
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

// serve hands w its outcome, through its loop. It reports false when the
// loop is closed (w is then gone and the caller tries the next waiter).
// q.mu is held.
func (q *CrossQueue[V]) serve(w *crossWaiter[V], v V, err error) bool {
	w.state = waiterServed
	w.err = err
	if w.getter {
		w.v = v
	}
	_, cerr := w.loop.CallSoonThreadsafe(func() {
		f := w.fut
		if f.state != statePending {
			return
		}
		w.loop.addExternal(-1)
		if err != nil {
			f.finish(err)
			return
		}
		f.value = v
		f.finish(nil)
	})
	if cerr != nil {
		w.state = waiterGone
		return false
	}
	return true
}

// giveToGetter hands v to the first getter still waiting, dropping the
// ones that left; it reports false when none is waiting. q.mu is held.
func (q *CrossQueue[V]) giveToGetter(v V) bool {
	for len(q.getters) > 0 {
		w := q.getters[0]
		q.getters = q.getters[1:]
		if q.serve(w, v, nil) {
			return true
		}
	}
	return false
}

// putLocked puts v: to the first waiting getter, else into the queue. It
// reports false when the queue is full. q.mu is held.
func (q *CrossQueue[V]) putLocked(v V) bool {
	if q.giveToGetter(v) {
		return true
	}
	if q.n == len(q.items) {
		return false
	}
	q.push(v)
	return true
}

// getLocked takes the first item and lets the first waiting putter's item
// in. It reports false when the queue is empty. q.mu is held.
func (q *CrossQueue[V]) getLocked() (V, bool) {
	if q.n == 0 {
		var zero V
		return zero, false
	}
	v := q.pop()
	for len(q.putters) > 0 {
		w := q.putters[0]
		q.putters = q.putters[1:]
		if q.serve(w, *new(V), nil) {
			q.push(w.v)
			break
		}
	}
	return v, true
}

// PutNowait puts v without waiting (asyncio's put_nowait): ErrQueueFull
// when the queue is full, ErrQueueShutDown after Shutdown. Any goroutine.
func (q *CrossQueue[V]) PutNowait(v V) error {
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
	q.mu.Lock()
	defer q.mu.Unlock()
	v, ok := q.getLocked()
	if !ok {
		if q.shutdown {
			return v, ErrQueueShutDown
		}
		return v, ErrQueueEmpty
	}
	return v, nil
}

// Put puts v, suspending the running task t while the queue is full
// (asyncio's Queue.put). It returns ErrQueueShutDown after Shutdown (also
// for a Put waiting when Shutdown is called: its item is not put), and a
// *CancelledError when t is cancelled while waiting, the item not put. If
// the cancellation comes after a consumer took the item in, Put returns
// nil and t gets the cancellation at its next await.
func (q *CrossQueue[V]) Put(t *T, v V) error {
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
	w := q.newWaiter(t)
	w.v = v
	q.putters = append(q.putters, w)
	q.mu.Unlock()
	_, err := q.wait(t, w)
	return err
}

// Get takes the first item, suspending the running task t while the queue
// is empty (asyncio's Queue.get). It returns ErrQueueShutDown when the
// queue is shut down and empty, and a *CancelledError when t is cancelled
// while waiting. If the cancellation comes after a producer handed it an
// item, Get returns the item and t gets the cancellation at its next
// await, so no item is lost.
func (q *CrossQueue[V]) Get(t *T) (V, error) {
	t.checkRunning("CrossQueue.Get")
	q.mu.Lock()
	if v, ok := q.getLocked(); ok {
		q.mu.Unlock()
		return v, nil
	}
	if q.shutdown {
		q.mu.Unlock()
		var zero V
		return zero, ErrQueueShutDown
	}
	w := q.newWaiter(t)
	w.getter = true
	q.getters = append(q.getters, w)
	q.mu.Unlock()
	return q.wait(t, w)
}

// newWaiter makes t's waiter, its future cancellable the queue's way: a
// waiter still waiting leaves its list and is cancelled; one already
// served stays pending until its outcome arrives (it is on its way), and
// the cancellation is delivered at t's next await. q.mu is held.
func (q *CrossQueue[V]) newWaiter(t *T) *crossWaiter[V] {
	l := t.fut.loop
	w := &crossWaiter[V]{loop: l}
	fut := &Future[V]{futureCore: futureCore{loop: l}}
	fut.cancelFn = func(msg string) bool {
		if fut.state != statePending {
			return false
		}
		q.mu.Lock()
		waiting := w.state == waiterWaiting
		if waiting {
			w.state = waiterGone
			q.getters = removeWaiter(q.getters, w)
			q.putters = removeWaiter(q.putters, w)
		}
		q.mu.Unlock()
		if !waiting {
			w.cancelAsked, w.cancelMsg = true, msg
			return true // the outcome is on its way
		}
		l.addExternal(-1)
		return fut.cancelPlain(msg)
	}
	w.fut = fut
	l.addExternal(1)
	return w
}

// wait awaits w's outcome. A task unwound by its loop's Close while it
// waits leaves the queue; an item already handed to it goes back to the
// front of the queue.
func (q *CrossQueue[V]) wait(t *T, w *crossWaiter[V]) (V, error) {
	defer q.abandon(w)
	v, err := w.fut.Await(t)
	if w.cancelAsked && !IsCancelled(err) && t.numCancelRequested > 0 {
		// The outcome won the race with the cancellation: keep it, and
		// deliver the cancellation at the next await (as Recv does).
		t.mustCancel, t.cancelMsg = true, w.cancelMsg
	}
	return v, err
}

// abandon runs when Put or Get returns or its task is unwound: a waiter
// whose future is still pending (its loop is closing) leaves the queue,
// and an item handed to a getter that never received it goes back to the
// front.
func (q *CrossQueue[V]) abandon(w *crossWaiter[V]) {
	if w.fut.state != statePending {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case w.state == waiterWaiting:
		q.getters = removeWaiter(q.getters, w)
		q.putters = removeWaiter(q.putters, w)
	case w.state == waiterServed && w.getter && w.err == nil:
		// The item never reached the task: back to the front, or to the
		// next getter. (A queue refilled to capacity meanwhile cannot
		// take it back: it is dropped.)
		if !q.putFrontLocked(w.v) {
			w.loop.CallExceptionHandler(ExceptionContext{Message: "CrossQueue: an item handed to a task of a closing loop was dropped: the queue was full"})
		}
	}
	w.state = waiterGone
}

// putFrontLocked puts v back at the front: to the first waiting getter,
// else into the queue. It reports false when the queue is full. q.mu is
// held.
func (q *CrossQueue[V]) putFrontLocked(v V) bool {
	if q.giveToGetter(v) {
		return true
	}
	if q.n == len(q.items) {
		return false
	}
	q.head = (q.head - 1 + len(q.items)) % len(q.items)
	q.items[q.head] = v
	q.n++
	return true
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
// left and then fails with ErrQueueShutDown, as the Gets waiting now do
// at once (the queue is empty when a Get waits). With immediate, the items
// left are discarded too. Any goroutine may call it; it is idempotent.
func (q *CrossQueue[V]) Shutdown(immediate bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	if immediate {
		for q.n > 0 {
			q.pop()
		}
	}
	for _, w := range q.putters {
		q.serve(w, *new(V), ErrQueueShutDown)
	}
	q.putters = nil
	for _, w := range q.getters {
		q.serve(w, *new(V), ErrQueueShutDown)
	}
	q.getters = nil
}
