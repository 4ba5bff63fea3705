package asyncio

import (
	"context"
	"sync"
)

// ConcurrentFuture ports concurrent.futures.Future as returned by
// run_coroutine_threadsafe: a goroutine-safe handle on a result produced on
// a loop. All of its methods may be called from any goroutine. The zero
// ConcurrentFuture is not one: its Result, Wait and Cancel panic with a
// *ValueError (Result would otherwise wait for ever).
type ConcurrentFuture[V any] struct {
	loop *Loop
	done chan struct{}

	mu        sync.Mutex
	finished  bool
	cancelled bool
	value     V
	err       error
	source    AwaitableOf[V] // set on the loop goroutine once the task exists
	// blocked are executor jobs of loop waiting in Wait (see
	// executorJob.block); finishing unblocks them before closing done.
	blocked []*executorJob
}

// finishLocked marks the future done: the executor jobs waiting for it
// count as loop work again before any of them can run on. cf.mu is held.
func (cf *ConcurrentFuture[V]) finishLocked() {
	cf.finished = true
	for _, j := range cf.blocked {
		j.unblock(cf.done)
	}
	cf.blocked = nil
	close(cf.done)
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
	cf.cancelled, cf.value, cf.err = cancelled, v, err
	cf.finishLocked()
	cf.mu.Unlock()
	cf.loop.forgetThreadsafeFuture(cf)
}

// failClosed completes the future with the error of a closed loop (see
// Loop.failThreadsafeFutures), on the loop's goroutine. A source that is
// done finished before the loop closed, its done callback (the copy)
// still queued when the loop stopped: the future gets its outcome, not
// the closed loop's error (the source's effect happened).
func (cf *ConcurrentFuture[V]) failClosed() {
	cf.mu.Lock()
	src := cf.source
	cf.mu.Unlock()
	if src != nil && src.Done() {
		cf.copyOutcome(src)
		return
	}
	cf.complete(*new(V), errLoopClosed(), false)
}

// copyOutcome completes the future with the done src's outcome, on src's
// loop.
func (cf *ConcurrentFuture[V]) copyOutcome(src AwaitableOf[V]) {
	if src.Cancelled() {
		cf.complete(*new(V), nil, true)
		return
	}
	v, err := src.Result()
	cf.complete(v, err, false)
}

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
// or Threadsafe still pending (its task killed, or its creation still
// queued) fails with a *RuntimeError wrapping ErrLoopClosed; one whose
// task or awaitable finished, the copy of its outcome still queued when
// the loop stopped, gets that outcome. asyncio
// leaves such a concurrent.futures.Future pending forever; a Go caller
// blocked in Result would leak.
func (l *Loop) failThreadsafeFutures() {
	l.threadsafeMu.Lock()
	cfs := l.threadsafeFutures
	l.threadsafeFutures = nil
	l.threadsafeMu.Unlock()
	for cf := range cfs {
		cf.failClosed()
	}
}

// checkMade panics with a *ValueError naming op when cf was not made by
// RunCoroutineThreadsafe or Threadsafe (the zero ConcurrentFuture has no
// done channel, so that nothing could ever finish it).
func (cf *ConcurrentFuture[V]) checkMade(op string) {
	if cf.done == nil {
		panic(valueErrorf("%s: zero ConcurrentFuture (get one from RunCoroutineThreadsafe or Threadsafe)", op))
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
	cf.checkMade("ConcurrentFuture.Result")
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
// Called from a RunInExecutor job or a Go call of the future's loop with
// its ctx (or one derived from it, such as an http.Request's), it tells a
// loop on virtual time that the job now waits for the loop, which then
// keeps moving its clock instead of waiting for the job. A nil ctx panics with a *ValueError.
func (cf *ConcurrentFuture[V]) Wait(ctx context.Context) error {
	if ctx == nil {
		panic(&ValueError{Msg: "ConcurrentFuture.Wait: nil context"})
	}
	cf.checkMade("ConcurrentFuture.Wait")
	if cf.Done() {
		return nil // select would pick at random when both are ready
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if j := jobOf(ctx); j != nil && j.loop == cf.loop {
		cf.mu.Lock()
		if cf.finished {
			cf.mu.Unlock()
			return nil
		}
		cf.blocked = append(cf.blocked, j)
		j.block(cf.done)
		cf.mu.Unlock()
		cf.loop.wake()
		defer j.unblock(cf.done)
	}
	select {
	case <-cf.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel ports concurrent.futures.Future.cancel for run_coroutine_threadsafe
// (THREAD-4, THREAD-5): the future becomes cancelled at once, and the task
// (or the awaitable given to Threadsafe) is cancelled on its loop through
// CallSoonThreadsafe (a task may still run until its next suspension, or
// swallow the cancellation). It returns false if the future already
// finished, true if it is (now) cancelled.
func (cf *ConcurrentFuture[V]) Cancel() bool {
	cf.checkMade("ConcurrentFuture.Cancel")
	cf.mu.Lock()
	if cf.finished {
		cancelled := cf.cancelled
		cf.mu.Unlock()
		return cancelled
	}
	cf.cancelled = true
	cf.finishLocked()
	source := cf.source
	cf.mu.Unlock()
	cf.loop.forgetThreadsafeFuture(cf)
	if source != nil {
		_, _ = cf.loop.CallSoonThreadsafe(func() { source.Cancel() })
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
	l := loopOf(owner, "RunCoroutineThreadsafe")
	if fn == nil {
		panic(valueErrorf("RunCoroutineThreadsafe: nil coroutine function"))
	}
	cf := newConcurrentFuture[V](l)
	if !l.trackThreadsafeFuture(cf) {
		cf.failClosed()
		return cf
	}
	_, err := l.CallSoonThreadsafe(func() {
		cf.chain(l, CreateTask(l, fn))
	})
	if err != nil {
		cf.complete(*new(V), err, false)
	}
	return cf
}

// chain makes cf receive src's outcome (asyncio's _chain_future), on src's
// loop l.
func (cf *ConcurrentFuture[V]) chain(l *Loop, src AwaitableOf[V]) {
	cf.mu.Lock()
	cf.source = src
	alreadyCancelled := cf.cancelled
	cf.mu.Unlock()
	if alreadyCancelled {
		// As _chain_future: the destination was cancelled before the
		// chain existed, so cancel the source through the source loop.
		_, _ = l.CallSoonThreadsafe(func() { src.Cancel() })
	}
	if src.Done() {
		cf.copyOutcome(src)
	} else {
		src.AddDoneCallback(func() { cf.copyOutcome(src) })
	}
}

// Threadsafe returns a ConcurrentFuture that receives aw's outcome: the
// way for a goroutine that is not running the loop to wait for a Future or
// a Task (cf.Wait(ctx), cf.Result(), cf.Done()) without touching loop
// state. It may be called from any goroutine: the chain is made on aw's
// loop through CallSoonThreadsafe. Cancelling the ConcurrentFuture cancels
// aw (THREAD-5). On a closed loop the ConcurrentFuture fails at once with
// an error wrapping ErrLoopClosed. A nil aw panics with a *ValueError.
func Threadsafe[V any](aw AwaitableOf[V]) *ConcurrentFuture[V] {
	if aw == nil {
		panic(&ValueError{Msg: "Threadsafe: nil awaitable"})
	}
	l := aw.Loop() // set at creation, never written again: safe to read
	cf := newConcurrentFuture[V](l)
	if !l.trackThreadsafeFuture(cf) {
		cf.failClosed()
		return cf
	}
	if _, err := l.CallSoonThreadsafe(func() { cf.chain(l, aw) }); err != nil {
		cf.complete(*new(V), err, false)
	}
	return cf
}

// CallSoonThreadsafe schedules fn from any goroutine and wakes the loop if
// it is blocked waiting (asyncio's call_soon_threadsafe). It is the only
// Loop method that may be called from a goroutine that is not running the
// loop. The returned Handle may be cancelled from any goroutine. It
// returns an error wrapping ErrLoopClosed on a closed loop, and a
// *ValueError for a nil fn or the zero Loop (not made by NewLoop), which
// nothing would ever run.
func (l *Loop) CallSoonThreadsafe(fn func()) (*Handle, error) {
	if fn == nil {
		return nil, valueErrorf("CallSoonThreadsafe: nil callback")
	}
	h := &threadsafeHandle{Handle: Handle{fn: fn, threadsafe: true}, loop: l}
	if err := l.pushThreadsafe(&h.Handle); err != nil {
		return nil, err
	}
	return &h.Handle, nil
}

// pushThreadsafe queues h from any goroutine and wakes the loop: the body
// of CallSoonThreadsafe, also for handles the caller embeds in its own
// state instead of allocating (the cross-loop calls', crossloop.go). Such
// a handle, never handed out, is not threadsafe: nobody can cancel it, so
// it runs without the lock Handle.take takes for a cancellable one.
func (l *Loop) pushThreadsafe(h *Handle) error {
	if l.isZero() { // wakeCh is set by NewLoop, never changed: no lock needed
		return errZeroLoop()
	}
	l.threadsafeMu.Lock()
	if l.closed {
		l.threadsafeMu.Unlock()
		return errLoopClosed()
	}
	l.threadsafePending = append(l.threadsafePending, h)
	l.threadsafeFlag.Store(true)
	// Wake the loop while still holding the lock: Close takes it before
	// closing the selector, so the selector cannot be closed (and its
	// wakeup descriptor reused) between reading sleepMode and the wakeup.
	l.wakeLocked()
	l.threadsafeMu.Unlock()
	return nil
}

// wake wakes the loop if it is blocked waiting, so that it looks at its
// state again (the count of external work changed).
func (l *Loop) wake() {
	l.threadsafeMu.Lock()
	l.wakeLocked()
	l.threadsafeMu.Unlock()
}

// wakeLocked ends the loop's wait, however it waits (threadsafeMu held).
// One wakeup is enough: the loop is awake until it next decides to wait.
func (l *Loop) wakeLocked() {
	switch l.sleepMode {
	case sleepOnChannel:
		select {
		case l.wakeCh <- struct{}{}:
		default:
		}
	case sleepOnSelector:
		l.sel.wakeup()
	}
	l.sleepMode = sleepAwake
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
	// The two buffers take turns, so appending reallocates only while
	// they grow.
	l.threadsafePending, l.threadsafeSpare = l.threadsafeSpare[:0], pending
	l.threadsafeFlag.Store(false)
	l.threadsafeMu.Unlock()
	for i, h := range pending {
		l.ready.push(handleEntry(h))
		pending[i] = nil
	}
}
