//asynciovet:file-ignore droppedcancel scheduler tests of the locks yield with Sleep(tk, 0) and acquire in tasks the test does not cancel; the event log checks each outcome

package asyncio

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLOCK1_NoOwnerAndReleaseUnlocked(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		r.log("release unlocked: %s", describe(lk.Release()))
		r.log("acquire: %s locked=%v", describe(lk.Acquire(tk)), lk.Locked())
		// Another task may release a lock it never acquired.
		other := startTask(tk, "other", func(c *T) error {
			r.log("other release: %s", describe(lk.Release()))
			return nil
		})
		awaitAll(tk, other)
		r.log("locked=%v", lk.Locked())
		err := lk.Release()
		r.log("second release: %s is ErrRuntime=%v", describe(err), errors.Is(err, ErrRuntime))
		return nil
	})
	checkEvents(t, []string{
		`release unlocked: RuntimeError("Lock is not acquired.")`,
		"acquire: <nil> locked=true",
		"other release: <nil>",
		"locked=false",
		`second release: RuntimeError("Lock is not acquired.") is ErrRuntime=true`,
	}, &r)
}

func TestLOCK2_AcquireWithoutSuspending(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		bg := startTask(tk, "bg", func(c *T) error { r.log("bg runs"); return nil })
		_ = lk.Acquire(tk) // unlocked, no waiters: no suspension, bg has not run
		r.log("main acquired")
		waiter := startTask(tk, "waiter", func(c *T) error {
			r.log("waiter: %s", describe(lk.Acquire(c)))
			return nil
		})
		_ = Sleep(tk, 0) // bg runs, waiter queues
		waiter.Cancel("stop")
		_ = lk.Release() // the only waiter is cancelled: nobody to wake
		// Only a cancelled waiter is queued: it counts as empty (LOCK-2).
		_ = lk.Acquire(tk)
		r.log("main re-acquired locked=%v", lk.Locked())
		awaitAll(tk, bg, waiter)
		return lk.Release()
	})
	checkEvents(t, []string{
		"main acquired",
		"bg runs",
		"main re-acquired locked=true",
		`waiter: CancelledError("stop")`,
	}, &r)
}

func TestLOCK3_FIFOHandOffNoBarging(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		_ = lk.Acquire(tk)
		var tasks []*Task[struct{}]
		for _, name := range []string{"A", "B", "C"} {
			tasks = append(tasks, startTask(tk, name, func(c *T) error {
				if err := lk.Acquire(c); err != nil {
					return err
				}
				r.log("%s acquired", name)
				_ = Sleep(c, 0)
				return lk.Release()
			}))
		}
		_ = Sleep(tk, 0) // A, B, C queue up
		_ = lk.Release() // wakes A, but A marks the lock only when it runs
		r.log("after release locked=%v", lk.Locked())
		// D sees live waiters and queues behind C: no barging.
		if err := lk.Acquire(tk); err != nil {
			return err
		}
		r.log("D acquired")
		awaitAll(tk, tasks...)
		return lk.Release()
	})
	checkEvents(t, []string{
		"after release locked=false",
		"A acquired",
		"B acquired",
		"C acquired",
		"D acquired",
	}, &r)
}

func TestLOCK4_WokenWaiterCancelledPassesLockOn(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		_ = lk.Acquire(tk)
		mk := func(name string) *Task[struct{}] {
			return startTask(tk, name, func(c *T) error {
				err := lk.Acquire(c)
				r.log("%s: %s", name, describe(err))
				if err == nil {
					return lk.Release()
				}
				return err
			})
		}
		a, b := mk("A"), mk("B")
		_ = Sleep(tk, 0)
		_ = lk.Release() // A's future is resolved...
		a.Cancel()       // ...but A gets the CE instead (CANCEL-4) and passes the lock to B
		awaitAll(tk, a, b)
		r.log("locked=%v waiters=%d", lk.Locked(), lk.waiters.len())

		// A waiter cancelled while still queued is skipped as well.
		_ = lk.Acquire(tk)
		c, d := mk("C"), mk("D")
		_ = Sleep(tk, 0)
		c.Cancel()
		_ = Sleep(tk, 0)
		_ = lk.Release()
		awaitAll(tk, c, d)
		return nil
	})
	checkEvents(t, []string{
		`A: CancelledError("")`,
		"B: <nil>",
		"locked=false waiters=0",
		`C: CancelledError("")`,
		"D: <nil>",
	}, &r)
}

func TestLOCK_BoundToDifferentLoop(t *testing.T) {
	lk := NewLock()
	runVirtual(t, func(tk *T) error {
		_ = lk.Acquire(tk)
		w := startTask(tk, "w", func(c *T) error { return lk.Acquire(c) }) // binds to this loop
		_ = Sleep(tk, 0)
		_ = lk.Release()
		return tk.Await(w)
	})
	var got string
	runVirtual(t, func(tk *T) error {
		// Locked by the first run: this acquire must wait, on another loop.
		err := lk.Acquire(tk)
		got = describe(err)
		return nil
	})
	if !strings.HasPrefix(got, `RuntimeError("<asyncio.locks.Lock object at 0x`) || !strings.HasSuffix(got, `[locked]> is bound to a different event loop")`) {
		t.Errorf("got %q", got)
	}
}

func TestEVENT1_SetWakesAllClearDoesNotUnwake(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		ev := NewEvent()
		mk := func(name string) *Task[struct{}] {
			return startTask(tk, name, func(c *T) error {
				err := ev.Wait(c)
				r.log("%s: %s set=%v", name, describe(err), ev.IsSet())
				return nil
			})
		}
		a, b, c := mk("A"), mk("B"), mk("C")
		_ = Sleep(tk, 0)
		c.Cancel("bye") // a cancelled wait removes its future
		_ = Sleep(tk, 0)
		r.log("waiters=%d", ev.waiters.len())
		ev.Set()
		ev.Set() // no-op
		ev.Clear()
		awaitAll(tk, a, b, c)
		ev.Set()
		bg := startTask(tk, "bg", func(*T) error { r.log("bg"); return nil })
		r.log("main wait on set event: %s", describe(ev.Wait(tk))) // no suspension
		awaitAll(tk, bg)
		return nil
	})
	checkEvents(t, []string{
		`C: CancelledError("bye") set=false`,
		"waiters=2",
		"A: <nil> set=false",
		"B: <nil> set=false",
		"main wait on set event: <nil>",
		"bg",
	}, &r)
}

func TestCOND1_LockSharingAndUnacquiredErrors(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		r.log("wait: %s", describe(c.Wait(tk)))
		r.log("notify: %s", describe(c.Notify(1)))
		r.log("notify_all: %s", describe(c.NotifyAll()))
		lk := NewLock()
		c2 := NewCondition(lk)
		_ = c2.Acquire(tk)
		r.log("shared lock locked=%v", lk.Locked())
		r.log("notify locked: %s", describe(c2.Notify(1)))
		_ = lk.Release()
		r.log("cond locked=%v release: %s", c2.Locked(), describe(c2.Release()))
		return nil
	})
	checkEvents(t, []string{
		`wait: RuntimeError("cannot wait on un-acquired lock")`,
		`notify: RuntimeError("cannot notify on un-acquired lock")`,
		`notify_all: RuntimeError("cannot notify on un-acquired lock")`,
		"shared lock locked=true",
		"notify locked: <nil>",
		`cond locked=false release: RuntimeError("Lock is not acquired.")`,
	}, &r)
}

func TestCOND2_WaitReleasesAndReacquires(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		a := startTask(tk, "A", func(x *T) error {
			_ = c.Acquire(x)
			err := c.Wait(x)
			r.log("A woke: %s locked=%v", describe(err), c.Locked())
			return c.Release()
		})
		_ = Sleep(tk, 0)
		r.log("A waiting, locked=%v", c.Locked())
		_ = c.Acquire(tk)
		_ = c.Notify(1)
		_ = Sleep(tk, 0) // A cannot re-acquire while we hold the lock
		r.log("main releases")
		_ = c.Release()
		awaitAll(tk, a)
		return nil
	})
	checkEvents(t, []string{
		"A waiting, locked=false",
		"main releases",
		"A woke: <nil> locked=true",
	}, &r)
}

// COND-2 (3.13): re-acquisition survives further cancellations and the
// last CE instance (with its message) is returned with the lock held.
func TestCOND2_CancelledWaitReacquiresAndKeepsLastCE(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		a := startTask(tk, "A", func(x *T) error {
			_ = c.Acquire(x)
			err := c.Wait(x)
			r.log("A: %s locked=%v", describe(err), c.Locked())
			_ = c.Release()
			return err
		})
		_ = Sleep(tk, 0)
		_ = c.Acquire(tk)
		a.Cancel("first") // A's wait ends; it queues for the lock we hold
		_ = Sleep(tk, 0)
		a.Cancel("second") // A's lock acquire is cancelled; it retries
		_ = Sleep(tk, 0)
		r.log("main releases")
		_ = c.Release()
		awaitAll(tk, a)
		r.log("A cancelled=%v cancelling=%d", a.Cancelled(), a.Cancelling())
		return nil
	})
	checkEvents(t, []string{
		"main releases",
		`A: CancelledError("second") locked=true`,
		"A cancelled=true cancelling=2",
	}, &r)
}

// COND-2 (3.13): a waiter that was notified but then fails passes the
// notification to another waiter.
func TestCOND2_NotifiedThenCancelledPassesNotification(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		mk := func(name string) *Task[struct{}] {
			return startTask(tk, name, func(x *T) error {
				_ = c.Acquire(x)
				err := c.Wait(x)
				r.log("%s: %s", name, describe(err))
				return c.Release()
			})
		}
		a, b := mk("A"), mk("B")
		_ = Sleep(tk, 0)
		_ = c.Acquire(tk)
		_ = c.Notify(1) // A is notified...
		a.Cancel()      // ...but gets a CE instead, so B must be woken
		_ = c.Release()
		awaitAll(tk, a, b)
		return nil
	})
	checkEvents(t, []string{`A: CancelledError("")`, "B: <nil>"}, &r)
}

func TestCOND3_NotifyNInFIFOOrder(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		var tasks []*Task[struct{}]
		for _, name := range []string{"A", "B", "C", "D"} {
			tasks = append(tasks, startTask(tk, name, func(x *T) error {
				_ = c.Acquire(x)
				err := c.Wait(x)
				r.log("%s: %s", name, describe(err))
				return c.Release()
			}))
		}
		_ = Sleep(tk, 0)
		_ = c.Acquire(tk)
		_ = c.Notify(1)
		_ = c.Notify(1) // skips A, already notified
		_ = c.Release()
		_ = Sleep(tk, 0)
		_ = Sleep(tk, 0)
		r.log("waiters=%d", c.waiters.len())
		_ = c.Acquire(tk)
		_ = c.NotifyAll()
		_ = c.Release()
		awaitAll(tk, tasks...)
		return nil
	})
	checkEvents(t, []string{"A: <nil>", "B: <nil>", "waiters=2", "C: <nil>", "D: <nil>"}, &r)
}

func TestCOND4_WaitForChecksFirstAndLoops(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		c := NewCondition(nil)
		n := 0
		pred := func() bool { r.log("pred n=%d", n); return n >= 2 }
		w := startTask(tk, "W", func(x *T) error {
			_ = c.Acquire(x)
			err := c.WaitFor(x, pred)
			r.log("W: %s", describe(err))
			return c.Release()
		})
		_ = Sleep(tk, 0)
		for range 2 {
			_ = c.Acquire(tk)
			n++
			_ = c.NotifyAll()
			_ = c.Release()
			_ = Sleep(tk, 0)
			_ = Sleep(tk, 0)
		}
		awaitAll(tk, w)
		_ = c.Acquire(tk)
		r.log("true at once: %s", describe(c.WaitFor(tk, pred)))
		return c.Release()
	})
	checkEvents(t, []string{
		"pred n=0", "pred n=1", "pred n=2", "W: <nil>",
		"pred n=2", "true at once: <nil>",
	}, &r)
}

func TestSEM1_NegativeValueAndLocked(t *testing.T) {
	var r eventLog
	err, _ := mustPanic(t, "NewSemaphore(-1)", func() { NewSemaphore(-1) }).(error)
	r.log("Semaphore(-1): %s is ErrValue=%v", describe(err), errors.Is(err, ErrValue))
	err, _ = mustPanic(t, "NewBoundedSemaphore(-1)", func() { NewBoundedSemaphore(-1) }).(error)
	r.log("BoundedSemaphore(-1): %s", describe(err))
	runVirtual(t, func(tk *T) error {
		s := NewSemaphore(1)
		r.log("value 1 locked=%v", s.Locked())
		_ = s.Acquire(tk)
		r.log("value 0 locked=%v", s.Locked())
		b := startTask(tk, "B", func(x *T) error {
			err := s.Acquire(x)
			r.log("B: %s", describe(err))
			return err
		})
		_ = Sleep(tk, 0)
		_ = s.Release() // grants B
		_ = s.Release() // value 1, but B has not run yet
		r.log("value %d with B woken but not run: locked=%v", s.value, s.Locked())
		awaitAll(tk, b)
		r.log("after B ran: value %d locked=%v", s.value, s.Locked())
		return nil
	})
	checkEvents(t, []string{
		`Semaphore(-1): ValueError("Semaphore initial value must be >= 0") is ErrValue=true`,
		`BoundedSemaphore(-1): ValueError("Semaphore initial value must be >= 0")`,
		"value 1 locked=false",
		"value 0 locked=true",
		"value 1 with B woken but not run: locked=true",
		"B: <nil>",
		"after B ran: value 1 locked=false",
	}, &r)
}

func TestSEM2_FIFOAndCancelledGrantIsPassedOn(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		s := NewSemaphore(1)
		_ = s.Acquire(tk)
		mk := func(name string) *Task[struct{}] {
			return startTask(tk, name, func(x *T) error {
				err := s.Acquire(x)
				r.log("%s: %s", name, describe(err))
				if err != nil {
					return err
				}
				_ = Sleep(x, 0)
				return s.Release()
			})
		}
		a, b, c := mk("A"), mk("B"), mk("C")
		_ = Sleep(tk, 0)
		_ = s.Release() // grants A (value stays 0)
		a.Cancel()      // A gives its unit back and wakes B
		awaitAll(tk, a, b, c)
		r.log("value=%d", s.value)
		return nil
	})
	checkEvents(t, []string{`A: CancelledError("")`, "B: <nil>", "C: <nil>", "value=1"}, &r)
}

// SEM-2 (3.12+): after any acquire, more waiters are woken while value > 0.
func TestSEM2_WakesAsManyAsValueAllows(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		s := NewSemaphore(0)
		b := startTask(tk, "B", func(x *T) error {
			err := s.Acquire(x)
			r.log("B: %s", describe(err))
			return err
		})
		_ = Sleep(tk, 0)
		_ = s.Release() // grants B
		_ = s.Release() // value 1, nobody else to wake yet
		// Main must queue: B is woken but has not run (no barging). Nobody
		// releases again: B's acquire wakes main on its way out.
		err := s.Acquire(tk)
		r.log("main: %s", describe(err))
		awaitAll(tk, b)
		r.log("value=%d", s.value)
		return nil
	})
	checkEvents(t, []string{"B: <nil>", "main: <nil>", "value=0"}, &r)
}

func TestSEM3_UnboundedAndBoundedRelease(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		s := NewSemaphore(1)
		_ = s.Release()
		_ = s.Release()
		r.log("plain value=%d", s.value)
		for range 3 {
			_ = s.Acquire(tk)
		}
		r.log("three acquires, locked=%v", s.Locked())

		bs := NewBoundedSemaphore(1)
		err := bs.Release()
		r.log("bounded release at initial: %s is ErrValue=%v", describe(err), errors.Is(err, ErrValue))
		_ = bs.Acquire(tk)
		r.log("locked=%v", bs.Locked())
		r.log("release after acquire: %s", describe(bs.Release()))
		r.log("second release: %s", describe(bs.Release()))
		return nil
	})
	checkEvents(t, []string{
		"plain value=3",
		"three acquires, locked=true",
		`bounded release at initial: ValueError("BoundedSemaphore released too many times") is ErrValue=true`,
		"locked=true",
		"release after acquire: <nil>",
		`second release: ValueError("BoundedSemaphore released too many times")`,
	}, &r)
}

func TestBAR1_IndicesAndDraining(t *testing.T) {
	var r eventLog
	err, _ := mustPanic(t, "NewBarrier(0)", func() { NewBarrier(0) }).(error)
	r.log("Barrier(0): %s", describe(err))
	runVirtual(t, func(tk *T) error {
		b := NewBarrier(2)
		r.log("parties=%d", b.Parties())
		a := startTask(tk, "A", func(x *T) error {
			i, err := b.Wait(x)
			r.log("A: index %d %s", i, describe(err))
			return err
		})
		_ = Sleep(tk, 0)
		r.log("n_waiting=%d", b.Waiting())
		i, err := b.Wait(tk) // last arrival: draining, returns without waiting
		r.log("main: index %d %s, n_waiting while draining=%d", i, describe(err), b.Waiting())
		// Arriving again while A has not left: blocked until A leaves and the
		// barrier fills again; D, which starts meanwhile, arrives first.
		d := startTask(tk, "D", func(x *T) error {
			i, err := b.Wait(x)
			r.log("D: index %d %s", i, describe(err))
			return err
		})
		i, err = b.Wait(tk)
		r.log("main again: index %d %s", i, describe(err))
		awaitAll(tk, a, d)
		r.log("n_waiting=%d broken=%v", b.Waiting(), b.Broken())
		return nil
	})
	checkEvents(t, []string{
		`Barrier(0): ValueError("parties must be > 0")`,
		"parties=2",
		"n_waiting=1",
		"main: index 1 <nil>, n_waiting while draining=0",
		"A: index 0 <nil>",
		"main again: index 1 <nil>",
		"D: index 0 <nil>",
		"n_waiting=0 broken=false",
	}, &r)
}

func TestBAR2_AbortAndReset(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		b := NewBarrier(3)
		mk := func(name string) *Task[struct{}] {
			return startTask(tk, name, func(x *T) error {
				_, err := b.Wait(x)
				r.log("%s: %s", name, describe(err))
				return nil
			})
		}
		a1, a2 := mk("A1"), mk("A2")
		_ = Sleep(tk, 0)
		r.log("n_waiting=%d", b.Waiting())
		b.Reset()
		r.log("resetting: n_waiting=%d broken=%v", b.Waiting(), b.Broken())
		awaitAll(tk, a1, a2)
		r.log("after reset: %s", b.state)

		c := mk("C")
		_ = Sleep(tk, 0)
		b.Abort()
		r.log("aborted: broken=%v", b.Broken())
		awaitAll(tk, c)
		_, err := b.Wait(tk)
		r.log("wait on broken: %s is ErrBrokenBarrier=%v ErrRuntime=%v",
			describe(err), errors.Is(err, ErrBrokenBarrier), errors.Is(err, ErrRuntime))
		b.Reset()
		r.log("reset with nobody inside: %s broken=%v", b.state, b.Broken())
		return nil
	})
	checkEvents(t, []string{
		"n_waiting=2",
		"resetting: n_waiting=0 broken=false",
		`A1: BrokenBarrierError("Abort or reset of barrier")`,
		`A2: BrokenBarrierError("Abort or reset of barrier")`,
		"after reset: filling",
		"aborted: broken=true",
		`C: BrokenBarrierError("Abort or reset of barrier")`,
		`wait on broken: BrokenBarrierError("Barrier aborted") is ErrBrokenBarrier=true ErrRuntime=true`,
		"reset with nobody inside: filling broken=false",
	}, &r)
}

func TestSEM_ReleaseAtMaxIntFailsWithoutWrapping(t *testing.T) {
	s := NewSemaphore(math.MaxInt)
	err := s.Release()
	if !errors.Is(err, ErrValue) || s.value != math.MaxInt {
		t.Fatalf("Release at MaxInt: err=%v value=%d", err, s.value)
	}
}

// The String() of every synchronisation primitive follows asyncio's
// __repr__ (locks.py: `<… object at 0x… [locked|unlocked|set|unset
// (, value:N)(, waiters:N)]>`, Barrier `[state(, waiters:n/parties)]`).
// The expected lines are CPython 3.11's output for the same sequence of
// operations (waiters counted as asyncio counts them: a woken waiter stays
// in _waiters until it runs).
func TestREPR_LocksMatchAsyncio(t *testing.T) {
	var out []string
	add := func(s fmt.Stringer) { out = append(out, repr(s)) }
	runVirtual(t, func(at *T) error {
		yield := func() { Sleep(at, 0) }
		spawn := func(fn func(t *T) error) {
			//asynciovet:ignore unawaitedtask the test creates a task it does not await on purpose (scheduling order or pending-task reporting)
			CreateTask(at, func(t *T) (struct{}, error) { return struct{}{}, fn(t) })
		}

		lk := NewLock()
		add(lk)
		lk.Acquire(at)
		add(lk)
		for range 2 {
			spawn(lk.Acquire)
		}
		yield()
		add(lk)
		lk.Release()
		add(lk)
		yield()
		add(lk)
		lk.Release()
		yield()
		lk.Release()
		add(lk)

		ev := NewEvent()
		add(ev)
		for range 2 {
			spawn(ev.Wait)
		}
		yield()
		add(ev)
		ev.Set()
		add(ev)
		yield()
		add(ev)

		sem := NewSemaphore(2)
		add(sem)
		sem.Acquire(at)
		add(sem)
		sem.Acquire(at)
		add(sem)
		spawn(sem.Acquire)
		yield()
		add(sem)
		sem.Release()
		yield()
		add(sem)
		bs := NewBoundedSemaphore(1)
		add(bs)

		c := NewCondition(nil)
		add(c)
		c.Acquire(at)
		add(c)
		spawn(func(t *T) error {
			if err := c.Acquire(t); err != nil {
				return err
			}
			defer c.Release()
			return c.Wait(t)
		})
		c.Release()
		yield()
		add(c)
		c.Acquire(at)
		c.Notify(1)
		add(c)
		c.Release()
		yield()
		yield()
		add(c)

		b := NewBarrier(3)
		add(b)
		var waiters []Awaitable
		for range 2 {
			waiters = append(waiters, CreateTask(at, func(t *T) (int, error) { return b.Wait(t) }))
		}
		yield()
		add(b)
		b.Abort()
		add(b)
		for _, w := range waiters {
			at.Await(w)
		}
		b.Reset()
		add(b)

		return nil
	})
	want := []string{
		"<asyncio.locks.Lock object at ADDR [unlocked]>",
		"<asyncio.locks.Lock object at ADDR [locked]>",
		"<asyncio.locks.Lock object at ADDR [locked, waiters:2]>",
		"<asyncio.locks.Lock object at ADDR [unlocked, waiters:2]>",
		"<asyncio.locks.Lock object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Lock object at ADDR [unlocked]>",
		"<asyncio.locks.Event object at ADDR [unset]>",
		"<asyncio.locks.Event object at ADDR [unset, waiters:2]>",
		"<asyncio.locks.Event object at ADDR [set, waiters:2]>",
		"<asyncio.locks.Event object at ADDR [set]>",
		"<asyncio.locks.Semaphore object at ADDR [unlocked, value:2]>",
		"<asyncio.locks.Semaphore object at ADDR [unlocked, value:1]>",
		"<asyncio.locks.Semaphore object at ADDR [locked]>",
		"<asyncio.locks.Semaphore object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Semaphore object at ADDR [locked]>",
		"<asyncio.locks.BoundedSemaphore object at ADDR [unlocked, value:1]>",
		"<asyncio.locks.Condition object at ADDR [unlocked]>",
		"<asyncio.locks.Condition object at ADDR [locked]>",
		"<asyncio.locks.Condition object at ADDR [unlocked, waiters:1]>",
		"<asyncio.locks.Condition object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Condition object at ADDR [unlocked]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:0/3]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:2/3]>",
		"<asyncio.locks.Barrier object at ADDR [broken]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:0/3]>",
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Fatal(d)
	}
}

func second[V any](_ V, err error) error { return err }

// A primitive bound to a loop that is running (another loop of a group,
// on its own goroutine) is refused by name only: its state is the owning
// loop's to read, so the message leaves out the repr's bracket (with the
// owner not running, as in TestLOCK_BoundToOtherLoop's runs one after the
// other, the repr is CPython's, state included).
func TestLoopBinding_OwnerRunningIsNamedWithoutItsState(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	lk, ev, sem, q := NewLock(), NewEvent(), NewSemaphore(0), NewQueue[int](1)
	var got []string
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		if err := lk.Acquire(tk); err != nil {
			return struct{}{}, err
		}
		// Bind each to loop 0, which runs on: a wait that has to create a
		// future binds.
		lkWaiter := CreateTask(tk, func(t *T) (struct{}, error) {
			if err := lk.Acquire(t); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, lk.Release()
		})
		evWaiter := CreateTask(tk, func(t *T) (struct{}, error) { return struct{}{}, ev.Wait(t) })
		semWaiter := CreateTask(tk, func(t *T) (struct{}, error) { return struct{}{}, sem.Acquire(t) })
		qWaiter := CreateTask(tk, func(t *T) (int, error) { return q.Get(t) })
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		_, err := CallOn(tk, g.Loop(1), func(t *T) (struct{}, error) {
			for _, e := range []error{lk.Acquire(t), ev.Wait(t), sem.Acquire(t), second(q.Get(t))} {
				got = append(got, describe(e))
			}
			return struct{}{}, nil
		})
		ev.Set()
		sem.Release()
		if err := lk.Release(); err != nil {
			return struct{}{}, err
		}
		if _, err := lkWaiter.Await(tk); err != nil {
			return struct{}{}, err
		}
		if err := q.PutNowait(1); err != nil {
			return struct{}{}, err
		}
		if _, err := qWaiter.Await(tk); err != nil {
			return struct{}{}, err
		}
		if _, err := evWaiter.Await(tk); err != nil {
			return struct{}{}, err
		}
		if _, err := semWaiter.Await(tk); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %q", got)
	}
	for i, prefix := range []string{"<asyncio.locks.Lock object at 0x", "<asyncio.locks.Event object at 0x",
		"<asyncio.locks.Semaphore object at 0x", "<Queue at 0x"} {
		want := `RuntimeError("` + prefix
		if !strings.HasPrefix(got[i], want) || strings.Contains(got[i], "[") || strings.Contains(got[i], "_queue") ||
			!strings.HasSuffix(got[i], `> is bound to a different event loop")`) {
			t.Errorf("refusal %d = %s, want %s…> is bound to a different event loop (no state)", i, got[i], want)
		}
	}
}
