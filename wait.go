package asyncio

import (
	"fmt"
	"iter"
	"time"
)

// ReturnWhen says when Wait returns (asyncio.FIRST_COMPLETED, ...). The
// zero value is AllCompleted, asyncio's default.
type ReturnWhen int

// String returns asyncio's constant name.
func (r ReturnWhen) String() string {
	switch r {
	case AllCompleted:
		return "ALL_COMPLETED"
	case FirstCompleted:
		return "FIRST_COMPLETED"
	case FirstException:
		return "FIRST_EXCEPTION"
	}
	return fmt.Sprintf("ReturnWhen(%d)", int(r))
}

// Wait waits from task t until the awaitables satisfy when, or the timeout
// passes (asyncio.wait). timeout == Never means no timeout. It returns the
// awaitables split into done and pending, each in input order, duplicates
// removed (WAIT-2), with the element type of aws: a []*Task[V] gives
// []*Task[V] back, a []Awaitable mixes any awaitables. A timeout is not an error and cancels nothing (WAIT-4).
// Wait always suspends t at least once and computes the split when it
// wakes (WAIT-5). Errors: *ValueError "Set of Tasks/Futures is empty." and
// "Invalid return_when value: <v>" (WAIT-1), "The future belongs to a
// different loop than the one specified as the loop argument" for an
// awaitable of another loop than t's (asyncio.wait would wait for ever;
// as_completed and gather raise this), all before anything is registered,
// and the *CancelledError when t is cancelled meanwhile (the awaitables are
// not cancelled).
func Wait[A Awaitable](t *T, aws []A, timeout time.Duration, when ReturnWhen) (done, pending []A, err error) {
	t.checkRunning("Wait")
	for _, aw := range aws {
		coreOf(aw, "Wait")
	}
	if len(aws) == 0 {
		return nil, nil, &ValueError{Msg: "Set of Tasks/Futures is empty."}
	}
	if when != AllCompleted && when != FirstCompleted && when != FirstException {
		return nil, nil, &ValueError{Msg: fmt.Sprintf("Invalid return_when value: %d", int(when))}
	}
	loop := t.Loop()
	for _, aw := range aws {
		if aw.Loop() != loop { // before anything is registered: it could only wait for ever
			return nil, nil, &ValueError{Msg: errOtherLoopFuture}
		}
	}
	fs := dedup(aws)
	waiter := NewFuture[struct{}](loop)
	waiter.kind = kindWait
	release := func() {
		if !waiter.Done() {
			waiter.SetResult(struct{}{})
		}
	}
	var timer *TimerHandle
	if timeout != Never {
		timer = loop.CallAt(addSaturating(loop.Time(), timeout), release)
	}
	counter := len(fs)
	ids := make([]CallbackID, len(fs))
	for i, f := range fs {
		ids[i] = f.core().addDoneCallbackFrom(func() {
			counter--
			if counter <= 0 || when == FirstCompleted ||
				when == FirstException && !f.Cancelled() && f.Err() != nil {
				if timer != nil {
					timer.Cancel()
				}
				release()
			}
		}, &waiter.futureCore)
	}
	_, err = waiter.Await(t)
	if timer != nil {
		timer.Cancel()
	}
	for i, f := range fs {
		f.RemoveDoneCallback(ids[i])
	}
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fs {
		if f.Done() {
			done = append(done, f)
		} else {
			pending = append(pending, f)
		}
	}
	return done, pending, nil
}

// dedup returns aws without repeats, in first-occurrence order.
func dedup[A Awaitable](aws []A) []A {
	seen := make(map[Awaitable]bool, len(aws))
	out := make([]A, 0, len(aws))
	for _, a := range aws {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// asCompleted is asyncio.tasks._AsCompletedIterator (3.13).
type asCompleted struct {
	loop     *Loop
	todo     []Awaitable // watched, not yet completed, in input order
	ids      map[Awaitable]CallbackID
	done     []Awaitable // completion queue; nil is the timeout sentinel
	getter   *Future[struct{}]
	timer    *TimerHandle
	todoLeft int
}

func newAsCompleted(t *T, aws []Awaitable, timeout time.Duration) *asCompleted {
	loop := t.Loop()
	ac := &asCompleted{loop: loop, ids: make(map[Awaitable]CallbackID)}
	ac.todo = dedup(aws)
	for _, f := range ac.todo {
		ac.ids[f] = f.core().addDoneCallbackFrom(func() { ac.handleCompletion(f) }, t.fut)
	}
	if len(ac.todo) > 0 && timeout != Never {
		ac.timer = loop.CallAt(addSaturating(loop.Time(), timeout), ac.handleTimeout)
	}
	ac.todoLeft = len(ac.todo)
	return ac
}

func (ac *asCompleted) handleTimeout() {
	for _, f := range ac.todo {
		f.RemoveDoneCallback(ac.ids[f])
		ac.put(nil)
	}
	ac.todo = nil
}

func (ac *asCompleted) handleCompletion(f Awaitable) {
	if len(ac.todo) == 0 {
		return // handleTimeout was here first
	}
	for i, x := range ac.todo {
		if x == f {
			ac.todo = append(ac.todo[:i], ac.todo[i+1:]...)
			break
		}
	}
	ac.put(f)
	if len(ac.todo) == 0 && ac.timer != nil {
		ac.timer.Cancel()
	}
}

func (ac *asCompleted) put(f Awaitable) {
	ac.done = append(ac.done, f)
	if ac.getter != nil && !ac.getter.Done() {
		ac.getter.SetResult(struct{}{})
	}
}

// next is __anext__: the next completed awaitable, a *TimeoutError once the
// timer fired, or t's cancellation.
func (ac *asCompleted) next(t *T) (Awaitable, error) {
	for len(ac.done) == 0 {
		ac.getter = NewFuture[struct{}](ac.loop)
		ac.getter.kind = kindAsCompleted
		_, err := ac.getter.Await(t)
		ac.getter = nil
		if err != nil {
			return nil, err
		}
	}
	f := ac.done[0]
	ac.done = ac.done[1:]
	if f == nil {
		return nil, &TimeoutError{}
	}
	return f, nil
}

// AsCompleted is "async for f in asyncio.as_completed(aws, timeout=...)"
// (3.13): it yields the original awaitables (duplicates removed) in the
// order they complete; the caller reads each one's result. Watching and the
// timeout timer (Never: none) start when AsCompleted is called (ASC-1).
// When the timer fires first, the sequence yields (nil, *TimeoutError) and
// stops; pending awaitables are not cancelled (ASC-4). If t is cancelled
// while waiting it yields (nil, *CancelledError) and stops. The sequence
// must be ranged over from task t; ranging over it again after a break
// resumes it where it stopped (as_completed's iterator). It yields the element
// type of aws (a []*Task[V] yields *Task[V]; with an error, the zero value).
// An awaitable of another loop than t's panics with asyncio's *ValueError
// "The future belongs to a different loop than the one specified as the
// loop argument", before anything is registered.
func AsCompleted[A Awaitable](t *T, aws []A, timeout time.Duration) iter.Seq2[A, error] {
	t.checkCaller("AsCompleted")
	untyped := make([]Awaitable, len(aws))
	for i, a := range aws {
		if coreOf(a, "AsCompleted").loop != t.Loop() { // as_completed's ensure_future(aw, loop=loop)
			panic(&ValueError{Msg: errOtherLoopFuture})
		}
		untyped[i] = a
	}
	ac := newAsCompleted(t, untyped, timeout)
	return func(yield func(A, error) bool) {
		var zero A
		for ac.todoLeft > 0 {
			ac.todoLeft--
			f, err := ac.next(t)
			if err != nil {
				yield(zero, err)
				return
			}
			if !yield(f.(A), nil) {
				return
			}
		}
	}
}

// AsCompletedOf is AsCompleted for awaitables of one result type (the
// same as AsCompleted with a []AwaitableOf[V]).
func AsCompletedOf[V any](t *T, aws []AwaitableOf[V], timeout time.Duration) iter.Seq2[AwaitableOf[V], error] {
	return AsCompleted(t, aws, timeout)
}

const (
	// AllCompleted returns when every awaitable is done (ALL_COMPLETED).
	AllCompleted ReturnWhen = iota
	// FirstCompleted returns when any awaitable is done (FIRST_COMPLETED).
	FirstCompleted
	// FirstException returns when any awaitable fails with an error other
	// than a cancellation, or when all are done (FIRST_EXCEPTION).
	FirstException
)
