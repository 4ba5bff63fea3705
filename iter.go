package asyncio

import (
	"errors"
	"iter"
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
// *Semaphore, a *BoundedSemaphore or a *Condition. If fn returns nil and
// the release fails (fn released lk itself), the release's error is
// returned.
func WithLock(t *T, lk Locker, fn func() error) (err error) {
	if lk == nil || fn == nil {
		panic(valueErrorf("WithLock: nil lock or function"))
	}
	if err := lk.Acquire(t); err != nil {
		return err
	}
	defer func() {
		if rerr := lk.Release(); err == nil {
			err = rerr
		}
	}()
	return fn()
}
