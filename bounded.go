package asyncio

import (
	"errors"
	"fmt"
	"iter"
)

// BoundedGroup is an entered bounded task group: a TaskGroup whose
// children run at most Limit at a time. It is handed to the body of
// BoundedTaskGroup; start children with SpawnBounded. A BoundedGroup must
// only be used from tasks of its loop.
type BoundedGroup struct {
	g       *Group
	limit   int
	busy    int // slots held
	running int // children whose function runs
	started int // children whose function has started
	// queue holds the children waiting for a slot, FIFO from head;
	// queued counts those of them that still wait (a child cancelled
	// while queued leaves the count when it ends, its entry when the
	// queue reaches it).
	queue  []*queuedChild
	head   int
	queued int
}

// queuedChild is a child waiting in a BoundedGroup's queue.
type queuedChild struct {
	// start starts the child and reports true, or reports false if the
	// child no longer waits (it was cancelled meanwhile).
	start func() bool
	left  bool // no longer counted in queued
}

// enqueue puts a child at the back of the queue.
func (g *BoundedGroup) enqueue(start func() bool) *queuedChild {
	q := &queuedChild{start: start}
	g.queue = append(g.queue, q)
	g.queued++
	return q
}

// leave stops counting q as waiting (idempotent).
func (g *BoundedGroup) leave(q *queuedChild) {
	if q != nil && !q.left {
		q.left = true
		g.queued--
	}
}

// BoundedTaskGroup is TaskGroup with at most limit children running at
// once: SpawnBounded creates the child task at once, but the child starts
// only when one of the limit slots is free, in the order the children
// were spawned (FIFO, no barging); a slot is freed when a running child
// ends. A queued child costs no goroutine, and if it is cancelled while
// queued it ends cancelled at once without running its function.
// Everything else — the first failure cancelling the other children (the
// queued ones too, which then never start) and the body, the
// ExceptionGroup, the handling of an outside cancellation and of a panic
// in body — is TaskGroup's exactly.
//
// A limit <= 0 is a programming error: BoundedTaskGroup panics with a
// *ValueError naming it, before running body.
func BoundedTaskGroup(t *T, limit int, body func(g *BoundedGroup) error) error {
	t.checkCaller("BoundedTaskGroup")
	if limit <= 0 {
		panic(valueErrorf("BoundedTaskGroup: limit must be > 0, got %d", limit))
	}
	if body == nil {
		panic(valueErrorf("BoundedTaskGroup: nil body"))
	}
	return TaskGroup(t, func(g *Group) error {
		return body(&BoundedGroup{g: g, limit: limit})
	})
}

// SpawnBounded starts fn as a child of g (see BoundedTaskGroup): the task
// exists at once and is returned; it runs when a slot is free. opts are
// passed to CreateTask (WithEagerStart is ignored for a queued child). It
// fails like Spawn, with a *RuntimeError and without creating a task, when
// the group is finished or shutting down.
func SpawnBounded[V any](g *BoundedGroup, fn func(*T) (V, error), opts ...TaskOption) (*Task[V], error) {
	if g == nil {
		panic(valueErrorf("SpawnBounded: nil *BoundedGroup"))
	}
	if fn == nil {
		panic(valueErrorf("SpawnBounded: nil coroutine function"))
	}
	granted := false // the child holds a slot
	var entry *queuedChild
	wrapper := func(t *T) (V, error) {
		if !granted && g.busy < g.limit && g.head == len(g.queue) {
			g.busy++
			granted = true
		}
		if !granted {
			// Started by a cancellation that Uncancel withdrew before
			// the first step: wait for a slot at the back of the queue.
			w := NewFuture[struct{}](t)
			g.leave(entry) // its first place in the queue, if it had one
			entry = g.enqueue(func() bool {
				if w.Done() {
					return false
				}
				granted = true
				w.SetResult(struct{}{})
				return true
			})
			if _, err := w.Await(t); err != nil {
				w.Cancel()
				g.leave(entry)
				if granted { // granted, then cancelled before it resumed
					granted = false
					g.release()
				}
				var zero V
				return zero, err
			}
		}
		g.running++
		g.started++
		defer func() { g.running-- }()
		return fn(t)
	}
	var task *Task[V]
	var err error
	if g.busy < g.limit && g.head == len(g.queue) {
		g.busy++
		granted = true
		if task, err = spawn(g.g, wrapper, opts, false); err != nil {
			g.busy--
			return nil, err
		}
	} else {
		if task, err = spawn(g.g, wrapper, opts, true); err != nil {
			return nil, err
		}
		t := task.T()
		entry = g.enqueue(func() bool {
			if !t.deferred {
				return false // cancelled while queued: it ends without running
			}
			granted = true
			t.startDeferred()
			return true
		})
	}
	// The slot is given back by a done callback, which runs after the
	// group's own (registered by Spawn): when a failure aborts the group,
	// the queued children are cancelled before the slot frees.
	task.AddDoneCallback(func() {
		g.leave(entry) // ended while queued, or already left
		if granted {
			granted = false
			g.release()
		}
	})
	return task, nil
}

// release frees a slot and starts the next queued children the free
// slots allow.
func (g *BoundedGroup) release() {
	g.busy--
	for g.busy < g.limit && g.head < len(g.queue) {
		q := g.queue[g.head]
		g.queue[g.head] = nil
		g.head++
		g.leave(q)
		if q.start() {
			g.busy++
		}
	}
	if g.head == len(g.queue) {
		g.queue, g.head = g.queue[:0], 0
	} else if g.head > 1024 && g.head > len(g.queue)/2 {
		n := copy(g.queue, g.queue[g.head:])
		clear(g.queue[n:])
		g.queue, g.head = g.queue[:n], 0
	}
}

// SpawnBoundedErr is SpawnBounded for a coroutine function with no value.
func SpawnBoundedErr(g *BoundedGroup, fn func(*T) error, opts ...TaskOption) (*Task[struct{}], error) {
	if fn == nil {
		panic(valueErrorf("SpawnBoundedErr: nil coroutine function"))
	}
	return SpawnBounded(g, func(t *T) (struct{}, error) { return struct{}{}, fn(t) }, opts...)
}

// Limit returns the group's concurrency limit.
func (g *BoundedGroup) Limit() int { return g.limit }

// Running returns the number of children whose function is running now
// (at most Limit).
func (g *BoundedGroup) Running() int { return g.running }

// Free returns the number of free slots (Limit minus the slots held).
func (g *BoundedGroup) Free() int { return g.limit - g.busy }

// Queued returns the number of children waiting for a slot. A child
// cancelled while queued stops counting when its end is processed, by
// the group's done callback (so before a task awaiting that child
// resumes), as asyncio's TaskGroup forgets a child in its done callback.
func (g *BoundedGroup) Queued() int { return g.queued }

// Started returns the number of children whose function has started so far.
func (g *BoundedGroup) Started() int { return g.started }

// Cancel ends the group early without an error, as Group.Cancel does:
// running children are cancelled, queued ones never start.
func (g *BoundedGroup) Cancel() { g.g.Cancel() }

// String is the TaskGroup repr with the limit and the running count:
// "<BoundedTaskGroup limit=2 running=2 tasks=5 entered>".
func (g *BoundedGroup) String() string {
	s := g.g.String()
	return fmt.Sprintf("<BoundedTaskGroup limit=%d running=%d%s", g.limit, g.running, s[len("<TaskGroup"):])
}

// GatherBounded runs fns as tasks, at most limit at a time, started in
// argument order as slots free, and returns their results in argument
// order (asyncio.gather over a semaphore, the gather(limit=) CPython
// declined). Unlike Gather it is structured: the first failure — or a
// child's own cancellation, as a *CancelledError — cancels every other
// child (queued ones never start) and, once all of them have finished, is
// returned as it is; cancelling t cancels them all and
// returns the *CancelledError after they have finished. No child outlives
// the call. A limit <= 0 or a nil function panics with a *ValueError
// before any task starts.
func GatherBounded[V any](t *T, limit int, fns ...func(*T) (V, error)) ([]V, error) {
	t.checkCaller("GatherBounded")
	checkBoundedArgs("GatherBounded", limit, fns)
	results := make([]V, len(fns))
	var first error
	err := BoundedTaskGroup(t, limit, func(g *BoundedGroup) error {
		for i, fn := range fns {
			task, err := SpawnBounded(g, fn)
			if err != nil {
				return err
			}
			// Runs after the group's own done callback, which aborts the
			// group on a failure.
			task.AddDoneCallback(func() {
				switch {
				case !task.Cancelled() && task.Err() != nil:
					if first == nil {
						first = task.Err()
					}
				case task.Cancelled():
					if first == nil && !g.g.aborting {
						// A child cancelled on its own (queued or
						// running) fails the gather (GATHER-3) and
						// stops the others.
						first = task.Err()
						g.Cancel()
					}
				default:
					results[i], _ = task.Result()
				}
			})
		}
		return nil
	})
	if first != nil {
		return nil, first
	}
	if err != nil {
		return nil, err
	}
	return results, nil
}

// GatherBoundedOutcomes is GatherBounded with return_exceptions=True: every
// child runs to its end (at most limit at a time) and its value or error
// (a *CancelledError for a child cancelled on its own, a *PanicError for
// one that panicked, as GatherOutcomes reports it) is returned in
// argument order; the error is only t's cancellation (then the children
// are cancelled and awaited first).
func GatherBoundedOutcomes[V any](t *T, limit int, fns ...func(*T) (V, error)) ([]Outcome[V], error) {
	t.checkCaller("GatherBoundedOutcomes")
	checkBoundedArgs("GatherBoundedOutcomes", limit, fns)
	out := make([]Outcome[V], len(fns))
	err := BoundedTaskGroup(t, limit, func(g *BoundedGroup) error {
		for i, fn := range fns {
			task, err := SpawnBounded(g, func(t *T) (struct{}, error) {
				v, err := callTaskFunc(t, fn)
				out[i] = Outcome[V]{Value: v, Err: err}
				if IsCancelled(err) {
					return struct{}{}, err
				}
				return struct{}{}, nil // a failure does not abort the group
			})
			if err != nil {
				return err
			}
			task.AddDoneCallback(func() {
				if task.Cancelled() {
					out[i] = Outcome[V]{Err: task.Err()}
				}
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AsCompletedBounded runs fns as tasks, at most limit at a time, started in
// argument order as slots free, and yields each one's index and outcome in
// completion order (as_completed(limit=), which CPython declined). A
// failure is yielded, not raised, and does not stop the others; so are a
// child's own cancellation (a *CancelledError) and its panic (a
// *PanicError). Breaking out of the loop
// cancels the children still running or queued and waits for them before
// the loop statement ends; if t is cancelled while waiting, the children
// are cancelled and awaited and the sequence yields (-1, Outcome{Err: the
// *CancelledError}) and stops. The sequence must be ranged over from task
// t, at most once (ranging it again panics with a *RuntimeError naming
// the misuse); nothing is started until it is. A limit <= 0 or a nil
// function panics with a *ValueError.
func AsCompletedBounded[V any](t *T, limit int, fns ...func(*T) (V, error)) iter.Seq2[int, Outcome[V]] {
	t.checkCaller("AsCompletedBounded")
	checkBoundedArgs("AsCompletedBounded", limit, fns)
	ranged := false
	return func(yield func(int, Outcome[V]) bool) {
		if ranged {
			panic(runtimeErrorf("AsCompletedBounded: the sequence was ranged over a second time " +
				"(it runs its functions once; call AsCompletedBounded again to run them again)"))
		}
		ranged = true
		type done struct {
			i int
			o Outcome[V]
		}
		var queue []done
		var getter *Future[struct{}]
		stopped, broke := false, false
		var requests int32 // t's cancel requests at the break
		pending := false   // one of them not delivered yet
		pendingMsg := ""   // its message (the group's own Cancel of t replaces it)
		err := BoundedTaskGroup(t, limit, func(g *BoundedGroup) error {
			for i, fn := range fns {
				var o Outcome[V]
				task, err := SpawnBounded(g, func(ct *T) (struct{}, error) {
					v, err := callTaskFunc(ct, fn)
					o = Outcome[V]{Value: v, Err: err}
					if IsCancelled(err) {
						return struct{}{}, err
					}
					return struct{}{}, nil // a failure does not abort the group
				})
				if err != nil {
					return err
				}
				task.AddDoneCallback(func() {
					if stopped {
						return
					}
					if task.Cancelled() {
						o = Outcome[V]{Err: task.Err()}
					}
					queue = append(queue, done{i, o})
					if getter != nil && !getter.Done() {
						getter.SetResult(struct{}{})
					}
				})
			}
			for n := 0; n < len(fns); n++ {
				for len(queue) == 0 {
					getter = NewFuture[struct{}](t)
					getter.kind = kindAsCompleted
					_, err := getter.Await(t)
					getter = nil
					if err != nil {
						stopped = true
						return err
					}
				}
				d := queue[0]
				queue = queue[1:]
				if !yield(d.i, d.o) {
					// A cancellation pending at the break, or requested
					// while the children stop, was not seen by the body.
					requests, pending, pendingMsg = t.numCancelRequested, t.mustCancel != cancelNone, t.cancelMessage()
					stopped, broke = true, true
					g.Cancel()
					return nil
				}
			}
			return nil
		})
		switch {
		case err == nil:
		case !broke:
			yield(-1, Outcome[V]{Err: err})
		case IsCancelled(err) && t.Cancelling() > 0 && (pending || t.numCancelRequested > requests):
			// Cancelled from outside while the children stopped after a
			// break: the loop statement cannot return the error, so the
			// cancellation is re-armed for t's next await, with its
			// message. A request the body saw (and broke on) is the
			// body's to return: it is not delivered a second time.
			msg := pendingMsg
			var ce *CancelledError
			if t.numCancelRequested > requests && errors.As(err, &ce) {
				msg = ce.Msg // a request made while the children stopped
			}
			t.rearmCancel(msg, cancelPending)
		}
	}
}

// callTaskFunc calls fn(t) and returns a panic in it as a *PanicError,
// the outcome a task that panicked has; Close's unwinding of a task on a
// locked thread passes through.
func callTaskFunc[V any](t *T, fn func(*T) (V, error)) (v V, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(lockedUnwind); ok {
				panic(r)
			}
			err = newPanicError(r)
		}
	}()
	return fn(t)
}

func checkBoundedArgs[V any](op string, limit int, fns []func(*T) (V, error)) {
	if limit <= 0 {
		panic(valueErrorf("%s: limit must be > 0, got %d", op, limit))
	}
	for i, fn := range fns {
		if fn == nil {
			panic(valueErrorf("%s: nil coroutine function at index %d", op, i))
		}
	}
}
