package asyncio

import (
	"container/list"
	"fmt"
	"math"
	"sync/atomic"
)

// ValueError and ErrValue (used below for bad input) are defined in errors.go.

// loopBinding ports mixins._LoopBoundMixin: a primitive binds to the loop of
// the first task that has to create a future, and refuses every other loop.
// The pointer is atomic because CPython guards the first binding with a
// global lock; everything else about a primitive is single-loop.
type loopBinding struct{ loop atomic.Pointer[Loop] }

// boundPrimitive is what bind names in its error: the full repr (CPython's
// message), and the repr's head, which never changes.
type boundPrimitive interface {
	fmt.Stringer
	identity() string
}

// bind runs on l's goroutine. The refusal names the primitive with its
// repr, state included, as CPython does, when the owning loop is not
// running (the loops of one thread, one after the other, as in CPython);
// while it runs (another loop of a LoopGroup, on its own goroutine) the
// state is that loop's to read, and the message names the primitive only.
func (b *loopBinding) bind(l *Loop, p boundPrimitive) error {
	if b.loop.CompareAndSwap(nil, l) {
		return nil
	}
	owner := b.loop.Load()
	if owner == l {
		return nil
	}
	name := "<" + p.identity() + ">"
	if !owner.running.Load() {
		name = p.String()
	}
	return &RuntimeError{Msg: name + " is bound to a different event loop"}
}

// checkCaller panics with checkThread's *RuntimeError, before op changes
// anything, when the primitive is bound to a loop (a task has waited on
// it) and the caller is not that loop's goroutine: op's wake-ups
// (Future.SetResult) would refuse the caller only after op had changed
// the primitive (a Lock unlocked, an Event set, a Semaphore's value
// taken). An unbound primitive has no loop to check against.
func (b *loopBinding) checkCaller(op string) {
	if l := b.loop.Load(); l != nil && !l.onLoop() {
		l.checkThread(op)
	}
}

// waiterQueue is the FIFO of waiter futures (CPython's collections.deque).
// Elements are removed by identity, as deque.remove(fut) does.
type waiterQueue struct{ l list.List }

func (w *waiterQueue) push(f *Future[struct{}]) *list.Element { return w.l.PushBack(f) }

// remove is a no-op for an element already removed (e.g. popped by a wake-up).
func (w *waiterQueue) remove(e *list.Element) { w.l.Remove(e) }

func (w *waiterQueue) len() int { return w.l.Len() }

// front returns the first waiter, or nil.
func (w *waiterQueue) front() *Future[struct{}] {
	if e := w.l.Front(); e != nil {
		return e.Value.(*Future[struct{}])
	}
	return nil
}

// popFront removes and returns the first waiter, or nil.
func (w *waiterQueue) popFront() *Future[struct{}] {
	if e := w.l.Front(); e != nil {
		return w.l.Remove(e).(*Future[struct{}])
	}
	return nil
}

// each calls fn on every waiter in FIFO order until fn returns false.
func (w *waiterQueue) each(fn func(*Future[struct{}]) bool) {
	for e := w.l.Front(); e != nil; e = e.Next() {
		if !fn(e.Value.(*Future[struct{}])) {
			return
		}
	}
}

// wakeNext wakes the first waiter that is not done yet (Queue._wakeup_next),
// removing it and the done ones before it.
func (w *waiterQueue) wakeNext() {
	for f := w.popFront(); f != nil; f = w.popFront() {
		if !f.Done() {
			_ = f.SetResult(struct{}{})
			return
		}
	}
}

// await parks t on a new waiter at the back of w until the waiter is woken.
// If the wait fails (a cancellation), the waiter leaves the queue; if it
// had been woken already and canUse reports that the turn it was woken
// for is still there, the turn passes to the next waiter, so no wakeup is
// lost (QUEUE-4).
func (w *waiterQueue) await(t *T, kind futureKind, canUse func() bool) error {
	f := NewFuture[struct{}](t.Loop())
	f.kind = kind
	elem := w.push(f)
	if _, err := f.Await(t); err != nil {
		f.Cancel() // in case it is not done yet
		w.remove(elem)
		if canUse() && !f.Cancelled() {
			w.wakeNext()
		}
		return err
	}
	return nil
}

func waitersSuffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", waiters:%d", n)
}

// Lock ports asyncio.Lock: a non-reentrant mutex without an owner (any task
// may release it) with strict FIFO hand-off (LOCK-1..4). The zero value is
// an unlocked Lock, ready to use (NewLock returns one). Like every primitive here it is not
// goroutine-safe: use it only from tasks and callbacks of one loop.
type Lock struct {
	binding loopBinding
	locked  bool
	waiters waiterQueue
}

// NewLock returns an unlocked Lock (asyncio.Lock()). It binds to the loop of
// the first task that has to wait on it.
func NewLock() *Lock { return &Lock{} }

// String returns a repr like `<asyncio.locks.Lock object at 0x… [locked, waiters:1]>`.
func (lk *Lock) String() string {
	state := "unlocked"
	if lk.locked {
		state = "locked"
	}
	return fmt.Sprintf("<%s [%s%s]>", lk.identity(), state, waitersSuffix(lk.waiters.len()))
}

func (lk *Lock) identity() string { return fmt.Sprintf("asyncio.locks.Lock object at %p", lk) }

// Locked reports whether the lock is held (Lock.locked).
func (lk *Lock) Locked() bool { return lk.locked }

// Acquire ports Lock.acquire. It returns nil at once, without suspending, iff
// the lock is unlocked and every queued waiter is cancelled (LOCK-2);
// otherwise t waits in FIFO order. If t is cancelled while waiting it returns
// the CancelledError and, when the lock is free, wakes the next waiter so a
// hand-off is never lost (LOCK-4). A RuntimeError is returned when the lock
// is already bound to another loop.
func (lk *Lock) Acquire(t *T) error {
	t.checkRunning("Lock.Acquire")
	if !lk.locked && lk.allWaitersCancelled() {
		lk.locked = true
		return nil
	}
	if err := lk.binding.bind(t.Loop(), lk); err != nil {
		return err
	}
	fut := NewFuture[struct{}](t.Loop())
	fut.kind = kindLock
	elem := lk.waiters.push(fut)
	_, err := fut.Await(t)
	lk.waiters.remove(elem)
	if err != nil {
		if IsCancelled(err) && !lk.locked {
			// We may have been handed the lock just before the CE: pass it on.
			lk.wakeUpFirst()
		}
		return err
	}
	// The woken waiter marks the lock itself (LOCK-4), so a task calling
	// Acquire in between saw a live waiter and queued behind it (LOCK-3).
	lk.locked = true
	return nil
}

// Release ports Lock.release: it unlocks and wakes the first waiter. Releasing
// an unlocked lock returns *RuntimeError "Lock is not acquired." (LOCK-1).
func (lk *Lock) Release() error {
	lk.binding.checkCaller("Lock.Release")
	if !lk.locked {
		return &RuntimeError{Msg: "Lock is not acquired."}
	}
	lk.locked = false
	lk.wakeUpFirst()
	return nil
}

func (lk *Lock) allWaitersCancelled() bool {
	all := true
	lk.waiters.each(func(f *Future[struct{}]) bool {
		all = f.Cancelled()
		return all
	})
	return all
}

// wakeUpFirst resolves the head waiter unless it is already done (then it is
// already due to wake up, or cancelled and about to remove itself).
func (lk *Lock) wakeUpFirst() {
	if f := lk.waiters.front(); f != nil && !f.Done() {
		_ = f.SetResult(struct{}{})
	}
}

// Event ports asyncio.Event: a flag that tasks can wait for (EVENT-1).
// Create it with NewEvent.
type Event struct {
	binding loopBinding
	value   bool
	waiters waiterQueue
}

// NewEvent returns a cleared Event (asyncio.Event()).
func NewEvent() *Event { return &Event{} }

// String returns a repr like `<asyncio.locks.Event object at 0x… [unset, waiters:2]>`.
func (ev *Event) String() string {
	state := "unset"
	if ev.value {
		state = "set"
	}
	return fmt.Sprintf("<%s [%s%s]>", ev.identity(), state, waitersSuffix(ev.waiters.len()))
}

func (ev *Event) identity() string { return fmt.Sprintf("asyncio.locks.Event object at %p", ev) }

// IsSet reports the flag (Event.is_set).
func (ev *Event) IsSet() bool { return ev.value }

// Set ports Event.set: if the flag is clear it sets it and resolves every
// waiter; the waiters resume later (MODEL-2), even if Clear runs first.
func (ev *Event) Set() {
	ev.binding.checkCaller("Event.Set")
	if ev.value {
		return
	}
	ev.value = true
	ev.waiters.each(func(f *Future[struct{}]) bool {
		if !f.Done() {
			_ = f.SetResult(struct{}{})
		}
		return true
	})
}

// Clear ports Event.clear: it only resets the flag.
func (ev *Event) Clear() {
	ev.binding.checkCaller("Event.Clear")
	ev.value = false
}

// Wait ports Event.wait: it returns nil at once if the flag is set, else
// waits until Set is called. A cancelled Wait removes its waiter and returns
// the CancelledError.
func (ev *Event) Wait(t *T) error {
	t.checkRunning("Event.Wait")
	if ev.value {
		return nil
	}
	if err := ev.binding.bind(t.Loop(), ev); err != nil {
		return err
	}
	fut := NewFuture[struct{}](t.Loop())
	fut.kind = kindEvent
	elem := ev.waiters.push(fut)
	_, err := fut.Await(t)
	ev.waiters.remove(elem)
	return err
}

// Condition ports asyncio.Condition with the 3.13 wait semantics (COND-1..4).
// Create it with NewCondition; the zero Condition is ready to use, with a
// Lock of its own (asyncio.Condition()).
type Condition struct {
	binding loopBinding
	lock    *Lock
	waiters waiterQueue
}

// NewCondition returns a Condition using lock, or a new Lock if lock is nil
// (asyncio.Condition(lock=None)). The zero Condition is the same as
// NewCondition(nil): it uses a Lock of its own.
func NewCondition(lock *Lock) *Condition {
	if lock == nil {
		lock = NewLock()
	}
	return &Condition{lock: lock}
}

// String returns a repr like `<asyncio.locks.Condition object at 0x… [locked, waiters:1]>`.
func (c *Condition) String() string {
	state := "unlocked"
	if c.lk().Locked() {
		state = "locked"
	}
	return fmt.Sprintf("<%s [%s%s]>", c.identity(), state, waitersSuffix(c.waiters.len()))
}

// lk is c's lock; the zero Condition makes its own on first use, as
// NewCondition(nil) does.
func (c *Condition) lk() *Lock {
	if c.lock == nil {
		c.lock = new(Lock)
	}
	return c.lock
}

func (c *Condition) identity() string { return fmt.Sprintf("asyncio.locks.Condition object at %p", c) }

// Acquire acquires the underlying lock (Lock.Acquire).
func (c *Condition) Acquire(t *T) error { return c.lk().Acquire(t) }

// Release releases the underlying lock (Lock.Release).
func (c *Condition) Release() error { return c.lk().Release() }

// Locked reports whether the underlying lock is held.
func (c *Condition) Locked() bool { return c.lk().Locked() }

// Wait ports Condition.wait (3.13): it releases the lock, waits to be
// notified, then re-acquires the lock and returns nil. The lock is always
// re-acquired before Wait returns, retrying through further cancellations;
// the last CancelledError is then returned. On any error one notification is
// passed to another waiter, since ours may have been consumed (a spurious
// wake-up, which the condition-variable protocol allows) (COND-2). Waiting
// on an unlocked condition returns *RuntimeError "cannot wait on un-acquired lock".
func (c *Condition) Wait(t *T) error {
	t.checkRunning("Condition.Wait")
	if !c.Locked() {
		return &RuntimeError{Msg: "cannot wait on un-acquired lock"}
	}
	if err := c.binding.bind(t.Loop(), c); err != nil {
		return err
	}
	fut := NewFuture[struct{}](t.Loop())
	fut.kind = kindCondition
	if err := c.lk().Release(); err != nil {
		return err
	}
	elem := c.waiters.push(fut)
	_, err := fut.Await(t)
	c.waiters.remove(elem)

	// Must re-acquire even if the wait was cancelled; only CEs are retried
	// (and returned afterwards: not a swallowed cancellation).
	if IsCancelled(err) {
		t.cancelHandled()
	}
	var lastCE error
	for {
		aerr := c.lk().Acquire(t)
		if aerr == nil {
			break
		}
		if !IsCancelled(aerr) || t.killed {
			// (A killed task, unwinding at Close, can never acquire.)
			lastCE = aerr
			break
		}
		t.cancelHandled()
		lastCE = aerr
	}
	if lastCE != nil {
		err = lastCE
	}
	if err != nil {
		c.notify(1)
	}
	return err
}

// WaitFor ports Condition.wait_for: it checks pred first and calls Wait while
// pred is false (COND-4). The lock must be held. It returns Wait's error, if any.
func (c *Condition) WaitFor(t *T, pred func() bool) error {
	t.checkRunning("Condition.WaitFor")
	if pred == nil {
		panic(valueErrorf("Condition.WaitFor: nil predicate"))
	}
	for !pred() {
		if err := c.Wait(t); err != nil {
			return err
		}
	}
	return nil
}

// Notify ports Condition.notify: it wakes up to n waiters that are not yet
// notified, in FIFO order (COND-3). The lock must be held, else it returns
// *RuntimeError "cannot notify on un-acquired lock".
func (c *Condition) Notify(n int) error {
	c.binding.checkCaller("Condition.Notify")
	if !c.Locked() {
		return &RuntimeError{Msg: "cannot notify on un-acquired lock"}
	}
	c.notify(n)
	return nil
}

// NotifyAll ports Condition.notify_all: Notify(number of waiters).
func (c *Condition) NotifyAll() error { return c.Notify(c.waiters.len()) }

func (c *Condition) notify(n int) {
	woken := 0
	c.waiters.each(func(f *Future[struct{}]) bool {
		if woken >= n {
			return false
		}
		if !f.Done() {
			woken++
			_ = f.SetResult(struct{}{})
		}
		return true
	})
}

// Semaphore ports asyncio.Semaphore with the 3.13 algorithm (SEM-1..3, gh-111693):
// FIFO waiters, no barging, and after every acquire attempt as many waiters
// are woken as the value allows. Create it with NewSemaphore.
type Semaphore struct {
	binding loopBinding
	name    string // for the repr: "Semaphore" or "BoundedSemaphore"
	value   int
	waiters waiterQueue
}

// NewSemaphore returns a Semaphore with the given initial value
// (asyncio.Semaphore(value)). A negative value is a programming error: it
// panics with *ValueError
// "Semaphore initial value must be >= 0".
func NewSemaphore(value int) *Semaphore {
	if value < 0 {
		panic(&ValueError{Msg: "Semaphore initial value must be >= 0"})
	}
	return &Semaphore{name: "Semaphore", value: value}
}

// String returns a repr like `<asyncio.locks.Semaphore object at 0x… [unlocked, value:2]>`.
func (s *Semaphore) String() string {
	state := "locked"
	if !s.Locked() {
		state = fmt.Sprintf("unlocked, value:%d", s.value)
	}
	return fmt.Sprintf("<%s [%s%s]>", s.identity(), state, waitersSuffix(s.waiters.len()))
}

func (s *Semaphore) identity() string { return fmt.Sprintf("asyncio.locks.%s object at %p", s.name, s) }

// Locked reports whether Acquire would have to wait: the value is 0 or some
// waiter is not cancelled, so newcomers cannot barge past waiters (SEM-1).
func (s *Semaphore) Locked() bool {
	if s.value == 0 {
		return true
	}
	live := false
	s.waiters.each(func(f *Future[struct{}]) bool {
		live = !f.Cancelled()
		return !live
	})
	return live
}

// Acquire ports Semaphore.acquire: if not Locked it decrements the value and
// returns nil without suspending; otherwise t waits in FIFO order. A waiter
// cancelled after being granted a unit gives it back (SEM-2).
func (s *Semaphore) Acquire(t *T) error {
	t.checkRunning("Semaphore.Acquire")
	if !s.Locked() {
		s.value--
		return nil
	}
	if err := s.binding.bind(t.Loop(), s); err != nil {
		return err
	}
	fut := NewFuture[struct{}](t.Loop())
	fut.kind = kindSemaphore
	elem := s.waiters.push(fut)
	_, err := fut.Await(t)
	s.waiters.remove(elem)
	if err != nil && IsCancelled(err) && fut.Done() && !fut.Cancelled() {
		// Granted by wakeUpNext (which decremented for us), but we will not
		// take it: undo the bookkeeping; the loop below passes it on.
		s.value++
	}
	// New waiters may have queued behind us because of FIFO; wake as many as
	// the value allows.
	for s.value > 0 && s.wakeUpNext() {
	}
	return err
}

// Release ports Semaphore.release: it increments the value and wakes the
// first waiter that is not done, decrementing on its behalf. A plain
// Semaphore may go above its initial value (SEM-3). It returns a
// *ValueError, changing nothing, only when the value would overflow an int
// (Python's integers have no such limit).
func (s *Semaphore) Release() error {
	s.binding.checkCaller(s.name + ".Release")
	if s.value == math.MaxInt {
		return &ValueError{Msg: "Semaphore value would overflow"}
	}
	s.value++
	s.wakeUpNext()
	return nil
}

func (s *Semaphore) wakeUpNext() bool {
	woke := false
	s.waiters.each(func(f *Future[struct{}]) bool {
		if f.Done() {
			return true
		}
		s.value--
		_ = f.SetResult(struct{}{})
		woke = true
		return false
	})
	return woke
}

// BoundedSemaphore ports asyncio.BoundedSemaphore: a Semaphore whose Release
// fails when the value would exceed the initial value (SEM-3).
type BoundedSemaphore struct {
	sem        Semaphore
	boundValue int
}

// NewBoundedSemaphore returns a BoundedSemaphore (asyncio.BoundedSemaphore(value));
// a negative value panics with *ValueError "Semaphore initial value must be >= 0".
func NewBoundedSemaphore(value int) *BoundedSemaphore {
	if value < 0 {
		panic(&ValueError{Msg: "Semaphore initial value must be >= 0"})
	}
	return &BoundedSemaphore{sem: Semaphore{name: "BoundedSemaphore", value: value}, boundValue: value}
}

// String returns a repr like `<asyncio.locks.BoundedSemaphore object at 0x… [locked]>`.
func (b *BoundedSemaphore) String() string { return b.sem.String() }

// Locked reports whether Acquire would have to wait (Semaphore.Locked).
func (b *BoundedSemaphore) Locked() bool { return b.sem.Locked() }

// Acquire behaves as Semaphore.Acquire.
func (b *BoundedSemaphore) Acquire(t *T) error { return b.sem.Acquire(t) }

// Release behaves as Semaphore.Release but returns *ValueError
// "BoundedSemaphore released too many times" (changing nothing) when the
// value is already at its initial value.
func (b *BoundedSemaphore) Release() error {
	if b.sem.value >= b.boundValue {
		return &ValueError{Msg: "BoundedSemaphore released too many times"}
	}
	return b.sem.Release()
}

type barrierState int

const (
	barrierFilling barrierState = iota
	barrierDraining
	barrierResetting
	barrierBroken
)

func (s barrierState) String() string {
	return [...]string{"filling", "draining", "resetting", "broken"}[s]
}

// Barrier ports asyncio.Barrier (BAR-1, BAR-2): Wait blocks until parties
// tasks are waiting, then releases them all. Create it with NewBarrier:
// the zero Barrier has no parties, and its Wait, Reset and Abort panic with
// a *ValueError that says so.
type Barrier struct {
	cond    *Condition // notifies every task when the state changes
	parties int
	state   barrierState
	count   int // tasks inside Wait
}

// NewBarrier returns a Barrier for parties tasks (asyncio.Barrier(parties));
// parties < 1 panics with *ValueError "parties must be > 0".
func NewBarrier(parties int) *Barrier {
	if parties < 1 {
		panic(&ValueError{Msg: "parties must be > 0"})
	}
	return &Barrier{cond: NewCondition(nil), parties: parties}
}

// String returns a repr like `<asyncio.locks.Barrier object at 0x… [filling, waiters:1/3]>`.
func (b *Barrier) String() string {
	extra := b.state.String()
	if !b.Broken() {
		extra += fmt.Sprintf(", waiters:%d/%d", b.Waiting(), b.parties)
	}
	return fmt.Sprintf("<asyncio.locks.Barrier object at %p [%s]>", b, extra)
}

// Wait ports Barrier.wait: it returns the arrival index 0…parties-1 once
// parties tasks are waiting; the last arrival releases everyone. Tasks that
// arrive while the barrier drains or resets wait until it fills again. It
// returns *BrokenBarrierError "Barrier aborted" when the barrier is broken on
// arrival, and "Abort or reset of barrier" when it is aborted or reset while
// waiting (BAR-1, BAR-2). If t is cancelled, Wait returns the CancelledError.
func (b *Barrier) Wait(t *T) (index int, err error) {
	b.checkMade("Barrier.Wait")
	t.checkRunning("Barrier.Wait")
	if err := b.cond.Acquire(t); err != nil {
		return 0, err
	}
	defer func() {
		if rerr := b.cond.Release(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	if err := b.block(t); err != nil {
		return 0, err
	}
	index = b.count
	b.count++
	defer func() {
		b.count--
		b.exit()
	}()
	if index+1 == b.parties {
		b.state = barrierDraining
		b.cond.notify(b.cond.waiters.len())
	} else if err := b.waitFilled(t); err != nil {
		return 0, err
	}
	return index, nil
}

// block waits while the barrier drains or resets, then fails if it is broken.
func (b *Barrier) block(t *T) error {
	err := b.cond.WaitFor(t, func() bool {
		return b.state != barrierDraining && b.state != barrierResetting
	})
	if err != nil {
		return err
	}
	if b.state == barrierBroken {
		return &BrokenBarrierError{Msg: "Barrier aborted"}
	}
	return nil
}

// waitFilled waits until the barrier leaves the filling state.
func (b *Barrier) waitFilled(t *T) error {
	if err := b.cond.WaitFor(t, func() bool { return b.state != barrierFilling }); err != nil {
		return err
	}
	if b.state == barrierBroken || b.state == barrierResetting {
		return &BrokenBarrierError{Msg: "Abort or reset of barrier"}
	}
	return nil
}

// exit lets the last task leaving a draining/resetting barrier refill it.
func (b *Barrier) exit() {
	if b.count == 0 {
		if b.state == barrierResetting || b.state == barrierDraining {
			b.state = barrierFilling
		}
		b.cond.notify(b.cond.waiters.len())
	}
}

// Reset ports Barrier.reset: tasks currently waiting get BrokenBarrierError;
// the barrier refills once they have left (at once if none are inside).
// CPython's coroutine takes the internal lock first, which is never held
// across a suspension, so doing it synchronously is equivalent.
func (b *Barrier) Reset() {
	b.checkMade("Barrier.Reset")
	b.cond.binding.checkCaller("Barrier.Reset")
	if b.count > 0 {
		b.state = barrierResetting
	} else {
		b.state = barrierFilling
	}
	b.cond.notify(b.cond.waiters.len())
}

// Abort ports Barrier.abort: the barrier becomes broken; current and future
// Wait calls return BrokenBarrierError until Reset.
func (b *Barrier) Abort() {
	b.checkMade("Barrier.Abort")
	b.cond.binding.checkCaller("Barrier.Abort")
	b.state = barrierBroken
	b.cond.notify(b.cond.waiters.len())
}

// checkMade panics with a *ValueError naming op when b was not made by
// NewBarrier (the zero Barrier has no parties), before op changes anything.
func (b *Barrier) checkMade(op string) {
	if b.cond == nil {
		panic(valueErrorf("%s: zero Barrier (make it with NewBarrier(parties))", op))
	}
}

// Parties returns the number of tasks needed to trip the barrier.
func (b *Barrier) Parties() int { return b.parties }

// Waiting returns the number of tasks waiting while filling, else 0
// (asyncio's n_waiting).
func (b *Barrier) Waiting() int {
	if b.state == barrierFilling {
		return b.count
	}
	return 0
}

// Broken reports whether the barrier is broken (after Abort).
func (b *Barrier) Broken() bool { return b.state == barrierBroken }
