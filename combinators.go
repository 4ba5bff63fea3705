package asyncio

import (
	"errors"
	"fmt"
	"iter"
	"reflect"
	"time"
)

// ErrValue matches every *ValueError.
var ErrValue = errors.New("asyncio: value error")

// ValueError is the analogue of the ValueError asyncio raises for a bad
// argument (an empty Wait, an unknown ReturnWhen). Msg is asyncio's message.
type ValueError struct {
	Msg string
}

// Error implements the error interface.
func (e *ValueError) Error() string { return "asyncio: " + e.Msg }

// Is reports that every ValueError matches ErrValue.
func (e *ValueError) Is(target error) bool { return target == ErrValue }

// ---------------------------------------------------------------- shield

// Shield protects aw from cancellation (asyncio.shield). If aw is already
// done, aw itself is returned (SHIELD-1). Otherwise a new future is
// returned that copies aw's outcome when aw finishes, and is cancelled if
// aw is cancelled (SHIELD-2). Cancelling the returned future — directly,
// or by cancelling a task awaiting it — leaves aw running (SHIELD-3); the
// copying callback is then removed from aw, or, if aw had already finished,
// aw's error is marked retrieved (SHIELD-4, 3.13).
func Shield[V any](aw AwaitableOf[V]) AwaitableOf[V] {
	if aw.Done() {
		return aw
	}
	outer := NewFuture[V](aw.Loop())
	innerID := aw.AddDoneCallback(func() {
		if outer.Cancelled() {
			if !aw.Cancelled() {
				aw.Exception() // mark retrieved
			}
			return
		}
		if aw.Cancelled() {
			outer.Cancel()
			return
		}
		if err := aw.Exception(); err != nil {
			outer.SetException(err)
			return
		}
		v, _ := aw.Result()
		outer.SetResult(v)
	})
	outer.AddDoneCallback(func() {
		if !aw.Done() {
			aw.RemoveDoneCallback(innerID)
		}
	})
	return outer
}

// ---------------------------------------------------------------- gather

// Outcome is one child's outcome in a return_exceptions gather: Value on
// success, else Err (the child's error, or a *CancelledError).
type Outcome[V any] struct {
	Value V
	Err   error
}

// Gather runs the awaitables concurrently and completes with their results
// in argument order (asyncio.gather(*aws)). The same awaitable passed twice
// is one child whose result appears twice (GATHER-1). With no awaitables
// the result is an already-completed empty slice on owner's loop
// (GATHER-2). The first child to fail — or to be cancelled, as a
// *CancelledError *error*, so Cancelled() is false — fails the gather at
// once; the other children keep running and their later errors are marked
// retrieved (GATHER-3). Children already done are processed before Gather
// returns, so a gather of done futures is done on return (GATHER-7, 3.12).
// All awaitables must belong to one loop; Gather panics with a *ValueError
// otherwise.
//
// The returned future's Cancel is _GatheringFuture.cancel (GATHER-5): false
// if the gather is done; otherwise every child is cancelled with the
// message, and if any of those cancels returned true the gather, once its
// last child finishes, fails with a *CancelledError (also in the Outcomes
// forms; Cancelled() stays false). Cancelling a task awaiting the gather
// cancels it the same way (GATHER-6).
func Gather[V any](owner LoopOwner, aws ...AwaitableOf[V]) *Future[[]V] {
	return gather(owner, untypedOf(aws), false, func(c Awaitable, _ error) V {
		v, _ := c.(AwaitableOf[V]).Result()
		return v
	})
}

// GatherOutcomes is asyncio.gather(*aws, return_exceptions=True): it
// completes after every child, with each child's value or error in place
// (GATHER-4). A cancelled child appears as a *CancelledError carrying the
// future's cancel message; for a task child the message is lost ("") as in
// asyncio.
func GatherOutcomes[V any](owner LoopOwner, aws ...AwaitableOf[V]) *Future[[]Outcome[V]] {
	return gather(owner, untypedOf(aws), true, func(c Awaitable, err error) Outcome[V] {
		if err != nil {
			return Outcome[V]{Err: err}
		}
		v, _ := c.(AwaitableOf[V]).Result()
		return Outcome[V]{Value: v}
	})
}

// GatherFuncs is asyncio.gather(*coros): each fn becomes a task on owner's
// loop (in argument order), gathered as by Gather.
func GatherFuncs[V any](owner LoopOwner, fns ...func(*T) (V, error)) *Future[[]V] {
	aws := make([]AwaitableOf[V], len(fns))
	for i, fn := range fns {
		aws[i] = CreateTask(owner, fn)
	}
	return Gather(owner, aws...)
}

// GatherAny is Gather over awaitables of different result types: each
// element of the result is the child's value as returned by its Result
// method (nil for an awaitable without one, such as *T).
func GatherAny(owner LoopOwner, aws ...Awaitable) *Future[[]any] {
	return gather(owner, aws, false, func(c Awaitable, _ error) any { return resultAny(c) })
}

// GatherAnyOutcomes is GatherOutcomes over awaitables of different result
// types (gather(*aws, return_exceptions=True)).
func GatherAnyOutcomes(owner LoopOwner, aws ...Awaitable) *Future[[]Outcome[any]] {
	return gather(owner, aws, true, func(c Awaitable, err error) Outcome[any] {
		if err != nil {
			return Outcome[any]{Err: err}
		}
		return Outcome[any]{Value: resultAny(c)}
	})
}

func untypedOf[V any](aws []AwaitableOf[V]) []Awaitable {
	out := make([]Awaitable, len(aws))
	for i, aw := range aws {
		out[i] = aw
	}
	return out
}

// resultAny calls aw's Result method, whatever its value type.
func resultAny(aw Awaitable) any {
	m := reflect.ValueOf(aw).MethodByName("Result")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 2 {
		return nil
	}
	return m.Call(nil)[0].Interface()
}

// gather is asyncio.gather over already-created awaitables. value builds one
// result element from a finished child and, with returnExceptions, its
// error (nil on success).
func gather[R any](owner LoopOwner, args []Awaitable, returnExceptions bool, value func(c Awaitable, err error) R) *Future[[]R] {
	if len(args) == 0 {
		f := NewFuture[[]R](owner.Loop())
		f.SetResult([]R{})
		return f
	}
	loop := args[0].Loop()
	seen := make(map[Awaitable]bool, len(args))
	var distinct, doneAtStart []Awaitable
	for _, a := range args {
		if a.Loop() != loop {
			panic(&ValueError{Msg: "The future belongs to a different loop than the one specified as the loop argument"})
		}
		if !seen[a] {
			seen[a] = true
			distinct = append(distinct, a)
		}
	}
	outer := NewFuture[[]R](loop)
	cancelRequested := false
	// _GatheringFuture.cancel (GATHER-5), also reached when the task
	// awaiting outer is cancelled (GATHER-6).
	outer.cancelFn = func(msg string) bool {
		if outer.Done() {
			return false
		}
		ret := false
		for _, c := range args {
			if c.Cancel(msg) {
				ret = true
			}
		}
		if ret {
			cancelRequested = true
		}
		return ret
	}
	nFinished := 0

	onChildDone := func(c Awaitable) {
		nFinished++
		if outer.Done() {
			if !c.Cancelled() {
				c.Exception() // mark retrieved
			}
			return
		}
		if !returnExceptions {
			if c.Cancelled() {
				outer.SetException(c.Err())
				return
			}
			if err := c.Exception(); err != nil {
				outer.SetException(err)
				return
			}
		}
		if nFinished < len(distinct) {
			return
		}
		results := make([]R, len(args))
		for i, c := range args {
			var err error
			if c.Cancelled() {
				err = cancelledInPlace(c)
			} else {
				err = c.Exception()
			}
			results[i] = value(c, err)
		}
		if cancelRequested {
			outer.SetException(lastChildCancelledError(args[len(args)-1]))
			return
		}
		outer.SetResult(results)
	}

	for _, c := range distinct {
		if c.Done() {
			doneAtStart = append(doneAtStart, c)
		} else {
			c.AddDoneCallback(func() { onChildDone(c) })
		}
	}
	// GATHER-7 (3.12): children done already are handled now, in order.
	for _, c := range doneAtStart {
		onChildDone(c)
	}
	return outer
}

// cancelledInPlace is the CancelledError a return_exceptions gather puts in
// place of a cancelled child: built from the child's stored cancel message
// (GATHER-4). A plain future keeps the message it was cancelled with; a
// task keeps it only if it ended by returning while a cancellation was
// pending (CANCEL-2), not if its function returned the CancelledError.
func cancelledInPlace(c Awaitable) error {
	return NewCancelledError(c.core().cancelMessage())
}

// lastChildCancelledError is asyncio's fut._make_cancelled_error() on the
// last child, for a gather whose cancellation was requested (GATHER-5): a
// cancelled child gives its own error; a task that swallowed the
// cancellation gives one with the message its Cancel stored.
func lastChildCancelledError(c Awaitable) error {
	if c.Cancelled() {
		return c.Err()
	}
	if t := taskOf(c); t != nil {
		return NewCancelledError(t.cancelMsg)
	}
	return NewCancelledError(c.core().cancelMessage())
}

// ---------------------------------------------------------------- wait

// ReturnWhen says when Wait returns (asyncio.FIRST_COMPLETED, ...). The
// zero value is AllCompleted, asyncio's default.
type ReturnWhen int

const (
	// AllCompleted returns when every awaitable is done (ALL_COMPLETED).
	AllCompleted ReturnWhen = iota
	// FirstCompleted returns when any awaitable is done (FIRST_COMPLETED).
	FirstCompleted
	// FirstException returns when any awaitable fails with an error other
	// than a cancellation, or when all are done (FIRST_EXCEPTION).
	FirstException
)

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
// removed (WAIT-2). A timeout is not an error and cancels nothing (WAIT-4).
// Wait always suspends t at least once and computes the split when it
// wakes (WAIT-5). Errors: *ValueError "Set of Tasks/Futures is empty." and
// "Invalid return_when value: <v>" (WAIT-1), and the *CancelledError when t
// is cancelled meanwhile (the awaitables are not cancelled).
func Wait(t *T, aws []Awaitable, timeout time.Duration, when ReturnWhen) (done, pending []Awaitable, err error) {
	if len(aws) == 0 {
		return nil, nil, &ValueError{Msg: "Set of Tasks/Futures is empty."}
	}
	if when != AllCompleted && when != FirstCompleted && when != FirstException {
		return nil, nil, &ValueError{Msg: fmt.Sprintf("Invalid return_when value: %v", when)}
	}
	fs := dedup(aws)
	loop := t.Loop()
	waiter := NewFuture[struct{}](loop)
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
		ids[i] = f.AddDoneCallback(func() {
			counter--
			if counter <= 0 || when == FirstCompleted ||
				when == FirstException && !f.Cancelled() && f.Exception() != nil {
				if timer != nil {
					timer.Cancel()
				}
				release()
			}
		})
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
func dedup(aws []Awaitable) []Awaitable {
	seen := make(map[Awaitable]bool, len(aws))
	out := make([]Awaitable, 0, len(aws))
	for _, a := range aws {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// ---------------------------------------------------------------- as_completed

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

func newAsCompleted(loop *Loop, aws []Awaitable, timeout time.Duration) *asCompleted {
	ac := &asCompleted{loop: loop, ids: make(map[Awaitable]CallbackID)}
	ac.todo = dedup(aws)
	for _, f := range ac.todo {
		ac.ids[f] = f.AddDoneCallback(func() { ac.handleCompletion(f) })
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
// must be ranged over from task t, at most once.
func AsCompleted(t *T, aws []Awaitable, timeout time.Duration) iter.Seq2[Awaitable, error] {
	ac := newAsCompleted(t.Loop(), aws, timeout)
	return func(yield func(Awaitable, error) bool) {
		for ac.todoLeft > 0 {
			ac.todoLeft--
			f, err := ac.next(t)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(f, nil) {
				return
			}
		}
	}
}

// AsCompletedOf is AsCompleted for awaitables of one result type.
func AsCompletedOf[V any](t *T, aws []AwaitableOf[V], timeout time.Duration) iter.Seq2[AwaitableOf[V], error] {
	seq := AsCompleted(t, untypedOf(aws), timeout)
	return func(yield func(AwaitableOf[V], error) bool) {
		for aw, err := range seq {
			var typed AwaitableOf[V]
			if aw != nil {
				typed = aw.(AwaitableOf[V])
			}
			if !yield(typed, err) {
				return
			}
		}
	}
}
