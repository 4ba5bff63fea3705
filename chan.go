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

// awaitChanOp runs op on a helper goroutine while t waits for it. op
// returns done false when it gave up because stop was closed. what and
// site are for the stall report (stall.go).
func awaitChanOp[R any](t *T, what string, site uintptr, op func(stop <-chan struct{}) (R, bool, error)) (R, error) {
	if t.killed {
		var zero R
		return zero, t.awaitKilled() // unwinding at Close: start nothing
	}
	l := t.fut.loop
	fut := &Future[R]{futureCore: futureCore{loop: l}}
	c := &outsideCall{stop: make(chan struct{}), fn: op, task: t, what: what, site: site}
	c.running.Store(true)
	fut.outside = true // see outcomeOutlivesCancel
	var held heldCancel
	// A cancellation only asks the helper to stop; the future stays
	// pending until it answers, so a value it already took is not lost.
	fut.setCancelFn(nil, func(m string) bool {
		if fut.state != statePending {
			return false
		}
		if !held.held {
			held.hold(m)
			c.abort(nil)
		}
		return true
	})
	// answer holds the helper's answer for Close (outcomeAtKill); its
	// mutex is held until the helper has answered.
	var answer struct {
		sync.Mutex
		r    R
		done bool
		err  error
	}
	answer.Lock()
	fut.extras.outcomeAtKill = func() bool {
		c.abort(nil)  // a helper still waiting gives up at once
		answer.Lock() // and answers
		c.untrack()   // its queued answer is dropped with the queue
		if !answer.done {
			return false
		}
		fut.settleUnwinding(answer.r, answer.err)
		return true
	}
	l.track(c)
	go func() {
		r, done, err := op(c.stop)
		answer.r, answer.done, answer.err = r, done, err
		answer.Unlock()
		c.running.Store(false)
		_, _ = l.CallSoonThreadsafe(func() {
			c.untrack()
			switch {
			case fut.state != statePending:
			case !done:
				fut.cancelPlain(held.msg)
			case err != nil:
				_ = fut.SetException(err)
			default:
				_ = fut.SetResult(r)
			}
		})
	}()
	r, err := fut.Await(t)
	// The operation won the race with the cancellation: keep its outcome,
	// and deliver the cancellation at the next await.
	held.rearm(t, err)
	return r, err
}
