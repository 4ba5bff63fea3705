package asyncio

// Go channels as awaits. A receive or send that can happen at once happens
// at once, without suspending (like awaiting a done future, it delivers no
// pending cancellation). Otherwise one helper goroutine per pending
// operation selects on the channel and on a stop signal, and reports back
// through CallSoonThreadsafe; nothing else is shared between operations,
// so no goroutine stays behind a cancelled one (measured in chan_test.go:
// BenchmarkRecv). A cancellation asks the helper to stop and waits for its
// answer, so that a value is never lost: if the operation won the race,
// it completes (Recv returns the value, Send reports the value sent) and
// the cancellation is delivered at the task's next await instead (a task
// whose function returns before one ends with its result, not cancelled:
// cancelLate, cancel.go). So it is when the cancellation comes after the
// answer, before the task resumed (outcomeOutlivesCancel, cancel.go), and
// when Close unwinds the task: its await stops the helper, waits for its
// answer and returns a value taken or sent (outcomeAtKill, step.go).

import (
	"fmt"
	"sync"
)

// Recv receives from ch as an await (v, ok := <-ch): it suspends the
// running task t until a value arrives (ok true) or ch is closed (ok false,
// v the zero value). If t is cancelled first it returns the
// *CancelledError, and the value is left in the channel. A receive that
// can happen at once does not suspend (like awaiting a done future): a
// loop over a channel that is always ready does not let other tasks run
// unless it yields (Sleep(t, 0)). A pending Recv is
// outside work (see Go): a virtual-time loop waits for a sender. A nil t
// or ch panics with a *ValueError (a nil channel never delivers).
func Recv[V any](t *T, ch <-chan V) (v V, ok bool, err error) {
	if t == nil {
		panic(&ValueError{Msg: "Recv: nil task"})
	}
	if ch == nil {
		panic(&ValueError{Msg: "Recv: nil channel (it would block forever)"})
	}
	t.checkRunning("Recv") // the calling goroutine too, before any change
	select {
	case v, ok = <-ch:
		return v, ok, nil
	default:
	}
	type received struct {
		v  V
		ok bool
	}
	r, err := awaitChanOp(t, "Recv", t.fut.loop.outsideSite(0), func(stop <-chan struct{}) (received, bool, error) {
		select {
		case v, ok := <-ch:
			return received{v, ok}, true, nil
		case <-stop:
			return received{}, false, nil
		}
	})
	return r.v, r.ok, err
}

// Send sends v on ch as an await (ch <- v): it suspends the running task t
// until a receiver takes v. If t is cancelled first it returns the
// *CancelledError and v was not sent. Sending on a closed channel returns
// an error matching ErrClosedChannel (Go would panic). A pending Send is
// outside work (see Go). A nil t or ch panics with a *ValueError.
func Send[V any](t *T, ch chan<- V, v V) error {
	if t == nil {
		panic(&ValueError{Msg: "Send: nil task"})
	}
	if ch == nil {
		panic(&ValueError{Msg: "Send: nil channel (it would block forever)"})
	}
	t.checkRunning("Send") // the calling goroutine too, before any change
	if sent, err := trySend(ch, v); sent || err != nil {
		return err
	}
	_, err := awaitChanOp(t, "Send", t.fut.loop.outsideSite(0), func(stop <-chan struct{}) (struct{}, bool, error) {
		return sendOrStop(stop, ch, v)
	})
	return err
}

// trySend sends v if a receiver or buffer space is ready.
func trySend[V any](ch chan<- V, v V) (sent bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = closedChannelError(r)
		}
	}()
	select {
	case ch <- v:
		return true, nil
	default:
		return false, nil
	}
}

// sendOrStop sends v or gives up when stop is closed (done false).
func sendOrStop[V any](stop <-chan struct{}, ch chan<- V, v V) (_ struct{}, done bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			done, err = true, closedChannelError(r)
		}
	}()
	select {
	case ch <- v:
		return struct{}{}, true, nil
	case <-stop:
		return struct{}{}, false, nil
	}
}

// closedChannelError is the error for the panic of a send on a closed
// channel (the only panic a send can raise).
func closedChannelError(r any) error {
	return fmt.Errorf("%w (%v)", ErrClosedChannel, r)
}

// chanCall is one channel operation waiting on its helper goroutine: the
// future its task awaits, the outside call the loop tracks, and the
// helper's answer, in one allocation.
type chanCall[R any] struct {
	fut Future[R] // first: the object a cleanup (watchUnretrieved) watches
	outsideCall
	held heldCancel
	// The helper's answer. mu is locked from the start until the helper
	// has written it: Close waits on it (outcomeAtKill).
	mu   sync.Mutex
	r    R
	done bool
	err  error
}

// awaitChanOp runs op on a helper goroutine while t waits for it. op
// returns done false when it gave up because stop was closed. what and
// site are for the stall report (stall.go).
func awaitChanOp[R any](t *T, what string, site uintptr, op func(stop <-chan struct{}) (R, bool, error)) (R, error) {
	if t.killed {
		var zero R
		return zero, t.awaitKilled() // unwinding at Close: start nothing
	}
	l := t.fut.loop
	x := &chanCall[R]{outsideCall: outsideCall{stop: make(chan struct{}), fn: op, task: t, what: what, site: site}}
	x.fut.loop = l
	x.fut.outside = true // see outcomeOutlivesCancel
	x.running.Store(true)
	x.mu.Lock()
	x.fut.setOps(nil, x) // cancel and outcomeAtKill below
	l.track(&x.outsideCall)
	go x.run(op)
	r, err := x.fut.Await(t)
	// The operation won the race with the cancellation: keep its outcome,
	// and deliver the cancellation at the next await.
	x.held.rearm(t, err)
	return r, err
}

// cancel only asks the helper to stop; the future stays pending until it
// answers, so a value it already took is not lost.
func (x *chanCall[R]) cancel(_ *futureCore, msg string) bool {
	if x.fut.state != statePending {
		return false
	}
	if !x.held.held {
		x.held.hold(msg)
		x.abort(nil)
	}
	return true
}

// run is the helper goroutine: op, then its answer, for the loop (deliver)
// and for Close (outcomeAtKill).
func (x *chanCall[R]) run(op func(stop <-chan struct{}) (R, bool, error)) {
	x.r, x.done, x.err = op(x.stop)
	x.mu.Unlock()
	x.running.Store(false)
	_, _ = x.loop.CallSoonThreadsafe(x.deliver)
}

// deliver runs on the loop with the helper's answer.
func (x *chanCall[R]) deliver() {
	x.untrack()
	switch {
	case x.fut.state != statePending:
	case !x.done:
		x.fut.cancelPlain(x.held.msg)
	case x.err != nil:
		_ = x.fut.SetException(x.err)
	default:
		_ = x.fut.SetResult(x.r)
	}
}

// outcomeAtKill is for Close, which unwinds the awaiting task: the helper
// is stopped, its answer awaited (it comes at once), and a value it took
// or sent settles the future.
func (x *chanCall[R]) outcomeAtKill() bool {
	x.abort(nil)
	x.mu.Lock()
	x.untrack() // its queued answer is dropped with the queue
	if !x.done {
		return false
	}
	x.fut.settleUnwinding(x.r, x.err)
	return true
}
