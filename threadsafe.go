package asyncio

import (
	"context"
	"sync"
)

// ConcurrentFuture ports concurrent.futures.Future as returned by
// run_coroutine_threadsafe: a goroutine-safe handle on a result produced on
// a loop. All of its methods may be called from any goroutine.
type ConcurrentFuture[V any] struct {
	loop *Loop
	done chan struct{}

	mu        sync.Mutex
	finished  bool
	cancelled bool
	value     V
	err       error
	task      *Task[V] // set on the loop goroutine once the task exists
}

func newConcurrentFuture[V any](l *Loop) *ConcurrentFuture[V] {
	return &ConcurrentFuture[V]{loop: l, done: make(chan struct{})}
}

// complete stores the outcome unless the future is already done.
func (cf *ConcurrentFuture[V]) complete(v V, err error, cancelled bool) {
	cf.mu.Lock()
	if cf.finished {
		cf.mu.Unlock()
		return
	}
	cf.finished, cf.cancelled, cf.value, cf.err = true, cancelled, v, err
	close(cf.done)
	cf.mu.Unlock()
	cf.loop.forgetThreadsafeFuture(cf)
}

// failClosed completes the future with the error of a closed loop (see
// Loop.failThreadsafeFutures).
func (cf *ConcurrentFuture[V]) failClosed() { cf.complete(*new(V), errLoopClosed(), false) }

// threadsafeFuture is a ConcurrentFuture of any type, as the loop tracks
// them until they complete.
type threadsafeFuture interface{ failClosed() }

// trackThreadsafeFuture records cf until it completes, so that Close can
// complete it if the loop closes first. It reports false, recording
// nothing, if the loop is closed already. Any goroutine may call it.
func (l *Loop) trackThreadsafeFuture(cf threadsafeFuture) bool {
	l.threadsafeMu.Lock()
	defer l.threadsafeMu.Unlock()
	if l.closed {
		return false
	}
	if l.threadsafeFutures == nil {
		l.threadsafeFutures = map[threadsafeFuture]struct{}{}
	}
	l.threadsafeFutures[cf] = struct{}{}
	return true
}

func (l *Loop) forgetThreadsafeFuture(cf threadsafeFuture) {
	l.threadsafeMu.Lock()
	delete(l.threadsafeFutures, cf)
	l.threadsafeMu.Unlock()
}

// failThreadsafeFutures is the part of Close that keeps foreign goroutines
// from waiting forever: every ConcurrentFuture of RunCoroutineThreadsafe
// still pending (its task killed, or its creation still queued) fails with
// a *RuntimeError wrapping ErrLoopClosed. asyncio leaves such a
// concurrent.futures.Future pending forever; a Go caller blocked in Result
// would leak.
func (l *Loop) failThreadsafeFutures() {
	l.threadsafeMu.Lock()
	cfs := l.threadsafeFutures
	l.threadsafeFutures = nil
	l.threadsafeMu.Unlock()
	for cf := range cfs {
		cf.failClosed()
	}
}

// Done reports whether the future has a result, an error, or was cancelled.
func (cf *ConcurrentFuture[V]) Done() bool {
	select {
	case <-cf.done:
		return true
	default:
		return false
	}
}

// Cancelled reports whether the future was cancelled (by Cancel, or because
// the task ended cancelled).
func (cf *ConcurrentFuture[V]) Cancelled() bool {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	return cf.cancelled
}

// Result waits until the future is done and returns the task's result or
// error; a *CancelledError if it was cancelled.
func (cf *ConcurrentFuture[V]) Result() (V, error) {
	<-cf.done
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if cf.cancelled {
		var zero V
		return zero, &CancelledError{Msg: ""}
	}
	return cf.value, cf.err
}

// Wait waits until the future is done (nil) or ctx is done (ctx.Err()).
func (cf *ConcurrentFuture[V]) Wait(ctx context.Context) error {
	if cf.Done() {
		return nil // select would pick at random when both are ready
	}
	select {
	case <-cf.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel ports concurrent.futures.Future.cancel for run_coroutine_threadsafe
// (THREAD-4, THREAD-5): the future becomes cancelled at once, and the task is
// cancelled on its loop through CallSoonThreadsafe (it may still run until
// its next suspension, or swallow the cancellation). It returns false if the
// future already finished, true if it is (now) cancelled.
func (cf *ConcurrentFuture[V]) Cancel() bool {
	cf.mu.Lock()
	if cf.finished {
		cancelled := cf.cancelled
		cf.mu.Unlock()
		return cancelled
	}
	cf.finished, cf.cancelled = true, true
	close(cf.done)
	task := cf.task
	cf.mu.Unlock()
	cf.loop.forgetThreadsafeFuture(cf)
	if task != nil {
		_, _ = cf.loop.CallSoonThreadsafe(func() { task.Cancel() })
	}
	return true
}

// RunCoroutineThreadsafe ports asyncio.run_coroutine_threadsafe: from any
// goroutine it schedules, through CallSoonThreadsafe, the creation of a task
// running fn on l, and returns a ConcurrentFuture that receives the task's
// outcome (THREAD-4). If the loop is closed the future fails at once with
// *RuntimeError "Event loop is closed", and so it does when the loop closes
// before the task is done (asyncio would leave it pending forever). A nil
// fn panics with a *ValueError in the calling goroutine (asyncio raises
// TypeError at the call).
func RunCoroutineThreadsafe[V any](owner LoopOwner, fn func(*T) (V, error)) *ConcurrentFuture[V] {
	if fn == nil {
		panic(&ValueError{Msg: "RunCoroutineThreadsafe: nil coroutine function"})
	}
	l := owner.ownerLoop()
	cf := newConcurrentFuture[V](l)
	if !l.trackThreadsafeFuture(cf) {
		cf.failClosed()
		return cf
	}
	_, err := l.CallSoonThreadsafe(func() {
		task := CreateTask(l, fn)
		cf.mu.Lock()
		cf.task = task
		alreadyCancelled := cf.cancelled
		cf.mu.Unlock()
		if alreadyCancelled {
			// As _chain_future: the destination was cancelled before the
			// chain existed, so cancel the source through the source loop.
			_, _ = l.CallSoonThreadsafe(func() { task.Cancel() })
		}
		task.AddDoneCallback(func() {
			if task.Cancelled() {
				cf.complete(*new(V), nil, true)
				return
			}
			v, err := task.Result()
			cf.complete(v, err, false)
		})
	})
	if err != nil {
		cf.complete(*new(V), err, false)
	}
	return cf
}

// CallSoonThreadsafe schedules fn from any goroutine and wakes the loop if
// it is blocked waiting (asyncio's call_soon_threadsafe). It is the only
// Loop method that may be called from a goroutine that is not running the
// loop. The returned Handle may be cancelled from any goroutine.
func (l *Loop) CallSoonThreadsafe(fn func()) (*Handle, error) {
	if fn == nil {
		return nil, runtimeErrorf("CallSoonThreadsafe: nil callback")
	}
	h := &Handle{fn: fn, loop: l, threadsafe: true}
	l.threadsafeMu.Lock()
	if l.closed {
		l.threadsafeMu.Unlock()
		return nil, errLoopClosed()
	}
	l.threadsafePending = append(l.threadsafePending, h)
	l.threadsafeFlag.Store(true)
	// Wake the loop while still holding the lock: Close takes it before
	// closing the selector, so the selector cannot be closed (and its
	// wakeup descriptor reused) between reading sleepMode and the wakeup.
	switch l.sleepMode {
	case sleepOnChannel:
		select {
		case l.wakeCh <- struct{}{}:
		default:
		}
	case sleepOnSelector:
		l.sel.wakeup()
	}
	l.sleepMode = sleepAwake // one wakeup is enough
	l.threadsafeMu.Unlock()
	return h, nil
}

// addExternal counts work in flight on other goroutines that will come
// back through CallSoonThreadsafe (executor jobs). On virtual time the
// loop waits for such work instead of reporting a deadlock. Increment
// before handing the work off; decrement on the loop, in the completion
// callback.
func (l *Loop) addExternal(n int64) { l.external.Add(n) }

// drainThreadsafe moves handles scheduled from other goroutines to the
// ready queue.
func (l *Loop) drainThreadsafe() {
	if l.threadsafeFlag.Load() { // inlined: most iterations have nothing to drain
		l.moveThreadsafe()
	}
}

func (l *Loop) moveThreadsafe() {
	l.threadsafeMu.Lock()
	pending := l.threadsafePending
	l.threadsafePending = nil
	l.threadsafeFlag.Store(false)
	l.threadsafeMu.Unlock()
	for _, h := range pending {
		l.ready.push(readyEntry{handle: h})
	}
}
