package asyncio

import (
	"errors"
	"iter"
	"time"
)

// Shapes for a Python port's `async for` and `async with`. An `async for`
// is a range over an iter.Seq2[V, error]: the loop body runs for each
// item, a failure (a cancellation of the ranging task, say) arrives as the
// last pair's error, and the end of the iteration (StopAsyncIteration) is
// simply the end of the range. An `async with` is a function that takes
// the body as a func() error and releases what it acquired however the
// body ends (error, panic or cancellation).

// Items returns the items of q in order until q is shut down and empty,
// as a worker's `while True: item = await q.get()` loop ending at
// QueueShutDown (3.13) does:
//
//	for item, err := range q.Items(t) {
//		if err != nil {
//			return err // t was cancelled while waiting
//		}
//		handle(item)
//		q.TaskDone()
//	}
//
// The shutdown ends the range without an error; any other error of Get
// (a *CancelledError when t is cancelled while waiting) is yielded once,
// with V's zero value, and ends it. Items does not call TaskDone: call it
// after handling each item if someone waits in Join. The sequence must be
// ranged over from task t.
func (q *Queue[V]) Items(t *T) iter.Seq2[V, error] {
	q.checkMade("Queue.Items")
	return func(yield func(V, error) bool) {
		for {
			v, err := q.Get(t)
			if errors.Is(err, ErrQueueShutDown) {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Locker is what `async with` acquires and releases: a *Lock, a
// *Semaphore, a *BoundedSemaphore or a *Condition.
type Locker interface {
	Acquire(t *T) error
	Release() error
}

var (
	_ Locker = (*Lock)(nil)
	_ Locker = (*Semaphore)(nil)
	_ Locker = (*BoundedSemaphore)(nil)
	_ Locker = (*Condition)(nil)
)

// WithLock is `async with lk: body`: it acquires lk, runs fn and releases
// lk however fn ends (an error, a panic, a cancellation), and returns fn's
// error. If the acquisition fails (t is cancelled while waiting) fn does
// not run and the acquisition's error is returned. lk is a *Lock, a
// *Semaphore, a *BoundedSemaphore or a *Condition. If the release fails
// (fn released lk itself), the release's error is returned instead of
// fn's, even a cancellation, as an exception raised by __aexit__ replaces
// the one in flight; a panic in fn goes on (the release still runs).
func WithLock(t *T, lk Locker, fn func() error) (err error) {
	if nilLocker(lk) || fn == nil {
		panic(valueErrorf("WithLock: nil lock or function"))
	}
	if err := lk.Acquire(t); err != nil {
		return err
	}
	defer func() {
		if rerr := lk.Release(); rerr != nil {
			err = rerr
		}
	}()
	return fn()
}

// nilLocker reports whether lk is nil: a nil interface, or a nil pointer
// of this package's lockers in it (whose Acquire would die on it, after
// the check that is there to name the mistake).
func nilLocker(lk Locker) bool {
	switch l := lk.(type) {
	case nil:
		return true
	case *Lock:
		return l == nil
	case *Semaphore:
		return l == nil
	case *BoundedSemaphore:
		return l == nil
	case *Condition:
		return l == nil
	}
	return false
}

// AsCompletedFuncs is the plain-for form of as_completed (ASC-3): `for f
// in as_completed(aws, timeout=timeout)` and `list(as_completed(aws))`.
// It returns one function per distinct element of aws (duplicates count
// once, as as_completed's set(aws) does); each call of any of them waits
// for the next awaitable to complete, in completion order, whichever
// function it is (CPython's _wait_for_one coroutines), and returns that
// awaitable's result. So the first function awaited gets the first
// completion even if it is not fns[0]. A call cancelled while waiting
// takes nothing: the completion goes to the next call. aws are not
// cancelled.
//
// The timeout runs from this call (timeout == Never: none), as
// as_completed's timer starts when it is called: once it passes, every
// call for an awaitable not completed by then returns a *TimeoutError
// (completions before it are still handed out first, in order), and the
// awaitables go on. Call the functions from tasks of owner's loop; each at
// most once is the intended use (a call beyond len(aws) results waits
// forever).
func AsCompletedFuncs[V any](owner LoopOwner, aws []AwaitableOf[V], timeout time.Duration) []func(t *T) (V, error) {
	l := loopOf(owner, "AsCompletedFuncs")
	for _, a := range aws {
		if coreOf(a, "AsCompletedFuncs").loop != l {
			panic(valueErrorf("AsCompletedFuncs: an awaitable of another loop"))
		}
	}
	aws = dedup(aws)
	// done receives each awaitable as it completes, or a nil for each
	// one still pending when the timer fires (asyncio's sentinel).
	done := NewQueue[AwaitableOf[V]](0)
	todo := make(map[AwaitableOf[V]]CallbackID, len(aws))
	var timer *TimerHandle
	for _, a := range aws {
		todo[a] = a.AddDoneCallback(func() {
			delete(todo, a)
			done.PutNowait(a)
			if len(todo) == 0 && timer != nil {
				timer.Cancel()
			}
		})
	}
	if len(aws) > 0 && timeout != Never {
		timer = l.CallAt(addSaturating(l.Time(), timeout), func() {
			// In input order, so that the sentinels are queued the same
			// way on every run (todo is a map).
			for _, a := range aws {
				if id, ok := todo[a]; ok {
					a.RemoveDoneCallback(id)
					done.PutNowait(nil)
				}
			}
			clear(todo)
		})
	}
	fns := make([]func(*T) (V, error), len(aws))
	for i := range fns {
		fns[i] = func(t *T) (V, error) {
			a, err := done.Get(t)
			if err == nil && a == nil {
				err = &TimeoutError{}
			}
			if err != nil {
				var zero V
				return zero, err
			}
			return a.Await(t)
		}
	}
	return fns
}
