package cpython

// CPython 3.13 Lib/test/test_asyncio/test_locks.py. CPython's
// acquire()/wait() return True; here they return a nil error. The tests
// that read private state (lock._waiters, sem._value) read what the repr
// shows of it (waiters:N, value:N).

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

var rgxRepr = regexp.MustCompile(`^<(?P<class>.*?) object at (?P<address>.*?)` +
	`\[(?P<extras>` +
	`(set|unset|locked|unlocked|filling|draining|resetting|broken)` +
	`(, value:\d)?` +
	`(, waiters:\d+)?` +
	`(, waiters:\d+\/\d+)?` + // barrier
	`)\]>\z`)

var waitersRE = regexp.MustCompile(`waiters:(\d+)`)

// reprWaiters is len(x._waiters) as the repr shows it.
func reprWaiters(x interface{ String() string }) int {
	m := waitersRE.FindStringSubmatch(x.String())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// acquirer is `async def c(result): await x.acquire(); result.append(n);
// return True`.
func acquirer(x interface{ Acquire(*asyncio.T) error }, result *[]int, n int) func(*asyncio.T) (bool, error) {
	return func(tk *asyncio.T) (bool, error) {
		if err := x.Acquire(tk); err != nil {
			return false, err
		}
		*result = append(*result, n)
		return true, nil
	}
}

func acquireFn(x interface{ Acquire(*asyncio.T) error }) func(*asyncio.T) (struct{}, error) {
	return fn0(x.Acquire)
}

func TestLocks_LockTests_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		check(t, strings.HasSuffix(lock.String(), "[unlocked]>"), lock)
		check(t, rgxRepr.MatchString(lock.String()), lock)
		noErr(t, lock.Acquire(tk))
		check(t, strings.HasSuffix(lock.String(), "[locked]>"), lock)
		check(t, rgxRepr.MatchString(lock.String()), lock)
		return nil
	})
}

func TestLocks_LockTests_test_acquire(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		var result []int
		noErr(t, lock.Acquire(tk))
		t1 := asyncio.CreateTask(tk, acquirer(lock, &result, 1))
		t2 := asyncio.CreateTask(tk, acquirer(lock, &result, 2))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		lock.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		t3 := asyncio.CreateTask(tk, acquirer(lock, &result, 3))
		lock.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2})
		lock.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2, 3})
		for _, task := range []*asyncio.Task[bool]{t1, t2, t3} {
			check(t, task.Done(), "done")
			check(t, result2(task), "result")
		}
		return nil
	})
}

// result2 is task.result() of a bool task.
func result2(task *asyncio.Task[bool]) bool { v, _ := task.Result(); return v }

func TestLocks_LockTests_test_acquire_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		noErr(t, lock.Acquire(tk))
		task := asyncio.CreateTask(tk, acquireFn(lock))
		tk.Loop().CallSoon(func() { task.Cancel() })
		_, err := task.Await(tk)
		cancelled(t, err)
		eq(t, reprWaiters(lock), 0, "lock._waiters")
		return nil
	})
}

func TestLocks_test_cancel_race(t *testing.T) {
	// A acquires the lock, B and C are blocked in acquire(); then, at
	// once, B is cancelled and A releases: C must get the lock.
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		lockit := func(blocker *asyncio.Future[struct{}]) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error {
				if err := lock.Acquire(tk); err != nil {
					return err
				}
				defer lock.Release()
				if blocker != nil {
					_, err := blocker.Await(tk)
					return err
				}
				return nil
			})
		}
		fa := asyncio.NewFuture[struct{}](tk)
		ta := asyncio.CreateTask(tk, lockit(fa))
		asyncio.Sleep(tk, 0)
		check(t, lock.Locked(), "locked")
		tb := asyncio.CreateTask(tk, lockit(nil))
		asyncio.Sleep(tk, 0)
		eq(t, reprWaiters(lock), 1)
		tc := asyncio.CreateTask(tk, lockit(nil))
		asyncio.Sleep(tk, 0)
		eq(t, reprWaiters(lock), 2)
		// Create the race and check.
		fa.SetResult(struct{}{})
		tb.Cancel()
		asyncio.Sleep(tk, 0)
		check(t, !lock.Locked(), "not locked")
		check(t, ta.Done(), "ta done")
		check(t, tb.Cancelled(), "tb cancelled")
		_, err := tc.Await(tk)
		return err
	})
}

func TestLocks_test_cancel_release_race(t *testing.T) {
	// Issue 32734: acquire 4 locks, cancel second, release first and 2
	// locks are taken at once.
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		lockCount, callCount := 0, 0
		lockit := fn0(func(tk *asyncio.T) error {
			callCount++
			if err := lock.Acquire(tk); err != nil {
				return err
			}
			lockCount++
			return nil
		})
		noErr(t, lock.Acquire(tk))
		t1 := asyncio.CreateTask(tk, lockit)
		t2 := asyncio.CreateTask(tk, lockit)
		t3 := asyncio.CreateTask(tk, lockit)
		// Start scheduled tasks
		asyncio.Sleep(tk, 0)
		tk.Loop().CallSoon(func() { t1.Cancel(); lock.Release() })
		_, err := t1.Await(tk)
		cancelled(t, err)
		// Make sure only one lock was taken
		eq(t, lockCount, 1)
		// While 3 calls were made to lockit()
		eq(t, callCount, 3)
		check(t, t1.Cancelled() && t2.Done(), "t1 cancelled and t2 done")
		// Cleanup the task that is stuck on acquire.
		t3.Cancel()
		asyncio.Sleep(tk, 0)
		check(t, t3.Cancelled(), "t3 cancelled")
		return nil
	})
}

func TestLocks_test_finished_waiter_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		noErr(t, lock.Acquire(tk))
		check(t, lock.Locked(), "locked")
		tb := asyncio.CreateTask(tk, acquireFn(lock))
		asyncio.Sleep(tk, 0)
		eq(t, reprWaiters(lock), 1)
		// Create a second waiter, wake up the first, and cancel it.
		tc := asyncio.CreateTask(tk, acquireFn(lock))
		tb.Cancel()
		lock.Release()
		asyncio.Sleep(tk, 0)
		check(t, lock.Locked(), "locked")
		check(t, tb.Cancelled(), "tb cancelled")
		_, err := tc.Await(tk)
		return err
	})
}

func TestLocks_LockTests_test_release_not_acquired(t *testing.T) {
	lock := asyncio.NewLock()
	raises(t, lock.Release(), "*asyncio.RuntimeError")
}

func TestLocks_LockTests_test_release_no_waiters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		noErr(t, lock.Acquire(tk))
		check(t, lock.Locked(), "locked")
		noErr(t, lock.Release())
		check(t, !lock.Locked(), "not locked")
		return nil
	})
}

func TestLocks_LockTests_test_context_manager(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		lock := asyncio.NewLock()
		check(t, !lock.Locked(), "not locked")
		// async with lock: acquire, then release on the way out.
		noErr(t, lock.Acquire(tk))
		check(t, lock.Locked(), "locked")
		noErr(t, lock.Release())
		check(t, !lock.Locked(), "not locked")
		return nil
	})
}

func TestLocks_EventTests_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ev := asyncio.NewEvent()
		check(t, strings.HasSuffix(ev.String(), "[unset]>"), ev)
		m := rgxRepr.FindStringSubmatch(ev.String())
		check(t, m != nil && m[rgxRepr.SubexpIndex("extras")] == "unset", ev)
		ev.Set()
		check(t, strings.HasSuffix(ev.String(), "[set]>"), ev)
		check(t, rgxRepr.MatchString(ev.String()), ev)
		// ev._waiters.append(mock.Mock()): a real waiter instead.
		ev.Clear()
		w := asyncio.CreateTask(tk, fn0(ev.Wait))
		asyncio.Sleep(tk, 0)
		check(t, strings.Contains(ev.String(), "waiters:1"), ev)
		check(t, rgxRepr.MatchString(ev.String()), ev)
		w.Cancel()
		return nil
	})
}

func TestLocks_EventTests_test_wait(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ev := asyncio.NewEvent()
		check(t, !ev.IsSet(), "not set")
		var result []int
		waiter := func(n int) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error {
				if err := ev.Wait(tk); err != nil {
					return err
				}
				result = append(result, n)
				return nil
			})
		}
		t1 := asyncio.CreateTask(tk, waiter(1))
		t2 := asyncio.CreateTask(tk, waiter(2))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		t3 := asyncio.CreateTask(tk, waiter(3))
		ev.Set()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{3, 1, 2})
		for _, task := range []*asyncio.Task[struct{}]{t1, t2, t3} {
			check(t, task.Done(), "done")
			noErr(t, task.Err())
		}
		return nil
	})
}

func TestLocks_test_wait_on_set(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ev := asyncio.NewEvent()
		ev.Set()
		noErr(t, ev.Wait(tk))
		return nil
	})
}

func TestLocks_EventTests_test_wait_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ev := asyncio.NewEvent()
		wait := asyncio.CreateTask(tk, fn0(ev.Wait))
		tk.Loop().CallSoon(func() { wait.Cancel() })
		_, err := wait.Await(tk)
		cancelled(t, err)
		eq(t, reprWaiters(ev), 0, "ev._waiters")
		return nil
	})
}

func TestLocks_test_clear(t *testing.T) {
	ev := asyncio.NewEvent()
	check(t, !ev.IsSet(), "not set")
	ev.Set()
	check(t, ev.IsSet(), "set")
	ev.Clear()
	check(t, !ev.IsSet(), "not set")
}

func TestLocks_test_clear_with_waiters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ev := asyncio.NewEvent()
		var result []int
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			if err := ev.Wait(tk); err != nil {
				return false, err
			}
			result = append(result, 1)
			return true, nil
		})
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		ev.Set()
		ev.Clear()
		check(t, !ev.IsSet(), "not set")
		ev.Set()
		ev.Set()
		eq(t, reprWaiters(ev), 1)
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		eq(t, reprWaiters(ev), 0)
		check(t, task.Done(), "done")
		check(t, result2(task), "result")
		return nil
	})
}

// condWaiter is `async def c(result): await cond.acquire(); if await
// cond.wait(): result.append(n); [cond.release()]; return True`.
func condWaiter(cond *asyncio.Condition, result *[]int, n int, release bool) func(*asyncio.T) (bool, error) {
	return func(tk *asyncio.T) (bool, error) {
		if err := cond.Acquire(tk); err != nil {
			return false, err
		}
		if err := cond.Wait(tk); err != nil {
			return false, err
		}
		*result = append(*result, n)
		if release {
			cond.Release()
		}
		return true, nil
	}
}

func TestLocks_ConditionTests_test_wait(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		var result []int
		t1 := asyncio.CreateTask(tk, condWaiter(cond, &result, 1, false))
		t2 := asyncio.CreateTask(tk, condWaiter(cond, &result, 2, false))
		t3 := asyncio.CreateTask(tk, condWaiter(cond, &result, 3, false))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		check(t, !cond.Locked(), "not locked")
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		check(t, cond.Locked(), "locked")
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		check(t, cond.Locked(), "locked")
		cond.Notify(2)
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		check(t, cond.Locked(), "locked")
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2})
		check(t, cond.Locked(), "locked")
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2, 3})
		check(t, cond.Locked(), "locked")
		for _, task := range []*asyncio.Task[bool]{t1, t2, t3} {
			check(t, task.Done() && result2(task), "done with True")
		}
		return nil
	})
}

func TestLocks_ConditionTests_test_wait_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		noErr(t, cond.Acquire(tk))
		wait := asyncio.CreateTask(tk, fn0(cond.Wait))
		tk.Loop().CallSoon(func() { wait.Cancel() })
		_, err := wait.Await(tk)
		cancelled(t, err)
		eq(t, reprWaiters(cond), 0, "cond._waiters")
		check(t, cond.Locked(), "locked")
		return nil
	})
}

func TestLocks_test_wait_cancel_contested(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		noErr(t, cond.Acquire(tk))
		check(t, cond.Locked(), "locked")
		waitTask := asyncio.CreateTask(tk, fn0(cond.Wait))
		asyncio.Sleep(tk, 0)
		check(t, !cond.Locked(), "not locked")
		// Notify, but contest the lock before cancelling
		noErr(t, cond.Acquire(tk))
		check(t, cond.Locked(), "locked")
		cond.Notify(1)
		tk.Loop().CallSoon(func() { waitTask.Cancel() })
		tk.Loop().CallSoon(func() { cond.Release() })
		waitTask.Await(tk) // a CancelledError should not happen, but is allowed
		check(t, cond.Locked(), "locked")
		return nil
	})
}

func TestLocks_test_wait_cancel_after_notify(t *testing.T) {
	// See bpo-32841
	run(t, func(tk *asyncio.T) error {
		waited := false
		cond := asyncio.NewCondition(nil)
		waiter := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := cond.Acquire(tk); err != nil {
				return err
			}
			defer cond.Release()
			waited = true // Make sure this area was reached
			return cond.Wait(tk)
		}))
		asyncio.Sleep(tk, 0) // Start waiting
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		asyncio.Sleep(tk, 0) // Get to acquire()
		waiter.Cancel()
		asyncio.Sleep(tk, 0) // Activate cancellation
		cond.Release()
		asyncio.Sleep(tk, 0) // Cancellation should occur
		check(t, waiter.Cancelled(), "waiter cancelled")
		check(t, waited, "waited")
		return nil
	})
}

func TestLocks_test_wait_unacquired(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		raises(t, cond.Wait(tk), "*asyncio.RuntimeError")
		return nil
	})
}

func TestLocks_test_wait_for(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		presult := false
		var result []int
		task := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			if err := cond.Acquire(tk); err != nil {
				return false, err
			}
			if err := cond.WaitFor(tk, func() bool { return presult }); err != nil {
				return false, err
			}
			result = append(result, 1)
			cond.Release()
			return true, nil
		})
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		presult = true
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		check(t, task.Done() && result2(task), "done with True")
		return nil
	})
}

func TestLocks_test_wait_for_unacquired(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		// predicate can return true immediately (CPython returns its
		// value; a Go predicate is a bool)
		noErr(t, cond.WaitFor(tk, func() bool { return true }))
		raises(t, cond.WaitFor(tk, func() bool { return false }), "*asyncio.RuntimeError")
		return nil
	})
}

func TestLocks_test_notify(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		var result []int
		t1 := asyncio.CreateTask(tk, condWaiter(cond, &result, 1, true))
		t2 := asyncio.CreateTask(tk, condWaiter(cond, &result, 2, true))
		t3 := asyncio.CreateTask(tk, condWaiter(cond, &result, 3, true))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		noErr(t, cond.Acquire(tk))
		cond.Notify(1)
		cond.Notify(2048)
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2, 3})
		for _, task := range []*asyncio.Task[bool]{t1, t2, t3} {
			check(t, task.Done() && result2(task), "done with True")
		}
		return nil
	})
}

func TestLocks_test_notify_all(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		var result []int
		t1 := asyncio.CreateTask(tk, condWaiter(cond, &result, 1, true))
		t2 := asyncio.CreateTask(tk, condWaiter(cond, &result, 2, true))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int(nil))
		noErr(t, cond.Acquire(tk))
		cond.NotifyAll()
		cond.Release()
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1, 2})
		check(t, t1.Done() && result2(t1) && t2.Done() && result2(t2), "done with True")
		return nil
	})
}

func TestLocks_test_notify_unacquired(t *testing.T) {
	raises(t, asyncio.NewCondition(nil).Notify(1), "*asyncio.RuntimeError")
}

func TestLocks_test_notify_all_unacquired(t *testing.T) {
	raises(t, asyncio.NewCondition(nil).NotifyAll(), "*asyncio.RuntimeError")
}

func TestLocks_ConditionTests_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		check(t, strings.Contains(cond.String(), "unlocked"), cond)
		check(t, rgxRepr.MatchString(cond.String()), cond)
		noErr(t, cond.Acquire(tk))
		check(t, strings.Contains(cond.String(), "locked"), cond)
		// cond._waiters.append(mock.Mock()), twice: real waiters instead.
		var waiters []*asyncio.Task[struct{}]
		for n := 1; n <= 2; n++ {
			waiters = append(waiters, asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
				if err := cond.Acquire(tk); err != nil {
					return err
				}
				defer cond.Release()
				return cond.Wait(tk)
			})))
			cond.Release()
			asyncio.Sleep(tk, 0)
			noErr(t, cond.Acquire(tk))
			check(t, strings.Contains(cond.String(), "waiters:"+strconv.Itoa(n)), cond)
			check(t, rgxRepr.MatchString(cond.String()), cond)
		}
		cond.NotifyAll()
		cond.Release()
		for _, w := range waiters {
			w.Await(tk)
		}
		return nil
	})
}

func TestLocks_ConditionTests_test_context_manager(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		cond := asyncio.NewCondition(nil)
		check(t, !cond.Locked(), "not locked")
		noErr(t, cond.Acquire(tk))
		check(t, cond.Locked(), "locked")
		noErr(t, cond.Release())
		check(t, !cond.Locked(), "not locked")
		return nil
	})
}

func TestLocks_test_explicit_lock(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		f := func(lock *asyncio.Lock, cond *asyncio.Condition) {
			if lock == nil {
				lock = asyncio.NewLock()
			}
			if cond == nil {
				cond = asyncio.NewCondition(lock)
			}
			check(t, !lock.Locked() && !cond.Locked(), "unlocked")
			noErr(t, cond.Acquire(tk))
			check(t, lock.Locked() && cond.Locked(), "locked through the condition")
			cond.Release()
			check(t, !lock.Locked() && !cond.Locked(), "unlocked")
			noErr(t, lock.Acquire(tk))
			check(t, lock.Locked() && cond.Locked(), "locked through the lock (cond._lock is lock)")
			lock.Release()
			check(t, !lock.Locked() && !cond.Locked(), "unlocked")
		}
		// All should work in the same way.
		f(nil, nil)
		f(asyncio.NewLock(), nil)
		lock := asyncio.NewLock()
		f(lock, asyncio.NewCondition(lock))
		return nil
	})
}

func TestLocks_test_ambiguous_loops(t *testing.T) {
	// CPython binds the primitive to another loop through its private
	// _loop; here a lock and a condition are bound to a first loop by
	// being waited on there, then used on a second one.
	lock := asyncio.NewLock()
	cond := asyncio.NewCondition(nil)
	run(t, func(tk *asyncio.T) error {
		noErr(t, lock.Acquire(tk))
		w := asyncio.CreateTask(tk, acquireFn(lock)) // waiting binds the lock
		c := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := cond.Acquire(tk); err != nil {
				return err
			}
			defer cond.Release()
			return cond.Wait(tk) // waiting binds the condition
		}))
		asyncio.Sleep(tk, 0)
		lock.Release()
		noErr(t, cond.Acquire(tk))
		cond.NotifyAll()
		cond.Release()
		w.Await(tk)
		lock.Release()
		_, err := c.Await(tk)
		return err
	})
	run(t, func(tk *asyncio.T) error {
		// wrong_loop_in_lock: acquired at once via the fast path, then a
		// condition over it has to wait and discovers the mismatch.
		noErr(t, lock.Acquire(tk))
		cond2 := asyncio.NewCondition(lock)
		raisesRegex(t, cond2.Acquire(tk), "*asyncio.RuntimeError", "is bound to a different event loop")
		lock.Release()
		// wrong_loop_in_cond
		noErr(t, cond.Acquire(tk))
		raisesRegex(t, cond.Wait(tk), "*asyncio.RuntimeError", "is bound to a different event loop")
		return nil
	})
}

func TestLocks_test_timeout_in_block(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		condition := asyncio.NewCondition(nil)
		noErr(t, condition.Acquire(tk))
		defer condition.Release()
		_, err := asyncio.WaitForFunc(tk, 500*ms, fn0(condition.Wait))
		raises(t, err, "TimeoutError")
		return nil
	})
}

// cancelledErrorOnCondition is test_cancelled_error_wakeup and
// test_cancelled_error_re_aquire: the CancelledError received while
// waiting, or while re-acquiring, is re-raised unmodified.
func cancelledErrorOnCondition(t *testing.T, whileReacquiring bool) {
	run(t, func(tk *asyncio.T) error {
		wake := false
		var raised error
		cond := asyncio.NewCondition(nil)
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := cond.Acquire(tk); err != nil {
				return err
			}
			defer cond.Release()
			err := cond.WaitFor(tk, func() bool { return wake })
			cancelled(t, err)
			raised = err
			return raised
		}))
		asyncio.Sleep(tk, 0)
		if whileReacquiring {
			// Task is waiting on the condition
			noErr(t, cond.Acquire(tk))
			wake = true
			cond.Notify(1)
			asyncio.Sleep(tk, 0)
			// Task is now trying to re-acquire the lock, cancel it there.
			task.Cancel("foo")
			cond.Release()
		} else {
			// Task is waiting on the condition, cancel it there.
			task.Cancel("foo")
		}
		_, err := task.Await(tk)
		var ce *asyncio.CancelledError
		check(t, errors.As(err, &ce) && ce.Msg == "foo", "err.exception.args == ('foo',): ", err)
		// We should have got the _same_ exception instance as the one
		// originally raised.
		check(t, err == raised, "the same exception instance")
		return nil
	})
}

func TestLocks_test_cancelled_error_wakeup(t *testing.T) { cancelledErrorOnCondition(t, false) }

func TestLocks_test_cancelled_error_re_aquire(t *testing.T) { cancelledErrorOnCondition(t, true) }

// cancelledWakeup is test_cancelled_wakeup and test_cancelled_wakeup_relock:
// a task cancelled at the "same" time as it is notified does not lose the
// wakeup.
func cancelledWakeup(t *testing.T, relock bool) {
	run(t, func(tk *asyncio.T) error {
		condition := asyncio.NewCondition(nil)
		state := 0
		consumer := fn0(func(tk *asyncio.T) error {
			if err := condition.Acquire(tk); err != nil {
				return err
			}
			defer condition.Release()
			for {
				if err := condition.WaitFor(tk, func() bool { return state != 0 }); err != nil {
					return err
				}
				if state < 0 {
					return nil
				}
				state--
			}
		})
		// create two consumers
		c := []*asyncio.Task[struct{}]{asyncio.CreateTask(tk, consumer), asyncio.CreateTask(tk, consumer)}
		// wait for them to settle
		asyncio.Sleep(tk, 0)
		noErr(t, condition.Acquire(tk))
		// produce one item and wake up one
		state++
		condition.Notify(1)
		if relock {
			// the target task wakes up and settles on re-acquiring the lock
			asyncio.Sleep(tk, 0)
		}
		// Cancel it while it is awaiting to be run (or the lock).
		c[0].Cancel()
		// now wait for the item to be consumed; if it isn't, the notify
		// was lost to the cancel.
		err := asyncio.Timeout(tk, 10*ms, func(*asyncio.TimeoutScope) error {
			return condition.WaitFor(tk, func() bool { return state == 0 })
		})
		if err != nil && !isClass(err, "TimeoutError") {
			return err
		}
		eq(t, state, 0)
		// clean up
		state = -1
		condition.NotifyAll()
		condition.Release()
		_, err = c[1].Await(tk)
		return err
	})
}

func TestLocks_test_cancelled_wakeup(t *testing.T) { cancelledWakeup(t, false) }

func TestLocks_test_cancelled_wakeup_relock(t *testing.T) { cancelledWakeup(t, true) }

func TestLocks_test_initial_value_zero(t *testing.T) {
	check(t, asyncio.NewSemaphore(0).Locked(), "locked")
}

func TestLocks_SemaphoreTests_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		check(t, strings.HasSuffix(sem.String(), "[unlocked, value:1]>"), sem)
		check(t, rgxRepr.MatchString(sem.String()), sem)
		noErr(t, sem.Acquire(tk))
		check(t, strings.HasSuffix(sem.String(), "[locked]>"), sem)
		check(t, !strings.Contains(sem.String(), "waiters"), sem)
		check(t, rgxRepr.MatchString(sem.String()), sem)
		// sem._waiters.append(mock.Mock()), twice: real waiters instead.
		var ws []*asyncio.Task[struct{}]
		for n := 1; n <= 2; n++ {
			ws = append(ws, asyncio.CreateTask(tk, acquireFn(sem)))
			asyncio.Sleep(tk, 0)
			check(t, strings.Contains(sem.String(), "waiters:"+strconv.Itoa(n)), sem)
			check(t, rgxRepr.MatchString(sem.String()), sem)
		}
		for _, w := range ws {
			w.Cancel()
		}
		return nil
	})
}

func TestLocks_test_semaphore_value(t *testing.T) {
	defer func() {
		var ve *asyncio.ValueError
		r := recover()
		err, _ := r.(error)
		check(t, errors.As(err, &ve), "ValueError panic, got ", r)
	}()
	asyncio.NewSemaphore(-1)
}

func TestLocks_SemaphoreTests_test_acquire(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(3)
		var result []int
		noErr(t, sem.Acquire(tk))
		noErr(t, sem.Acquire(tk))
		check(t, !sem.Locked(), "not locked")
		t1 := asyncio.CreateTask(tk, acquirer(sem, &result, 1))
		t2 := asyncio.CreateTask(tk, acquirer(sem, &result, 2))
		t3 := asyncio.CreateTask(tk, acquirer(sem, &result, 3))
		asyncio.Sleep(tk, 0)
		eq(t, result, []int{1})
		check(t, sem.Locked(), "locked")
		eq(t, reprWaiters(sem), 2)
		t4 := asyncio.CreateTask(tk, acquirer(sem, &result, 4))
		sem.Release()
		sem.Release()
		asyncio.Sleep(tk, 0)
		eq(t, len(result), 3)
		check(t, sem.Locked(), "locked")
		eq(t, reprWaiters(sem), 1)
		check(t, t1.Done() && result2(t1), "t1 done")
		race := []*asyncio.Task[bool]{t2, t3, t4}
		n := 0
		for _, task := range race {
			if task.Done() && result2(task) {
				n++
			}
		}
		eq(t, n, 2, "done race tasks")
		// cleanup locked semaphore
		sem.Release()
		_, err := asyncio.Gather[bool](tk, t2, t3, t4).Await(tk)
		return err
	})
}

func TestLocks_SemaphoreTests_test_acquire_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		noErr(t, sem.Acquire(tk))
		acquire := asyncio.CreateTask(tk, acquireFn(sem))
		tk.Loop().CallSoon(func() { acquire.Cancel() })
		_, err := acquire.Await(tk)
		cancelled(t, err)
		eq(t, reprWaiters(sem), 0, "no waiters left")
		return nil
	})
}

func TestLocks_test_acquire_cancel_before_awoken(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(0)
		t1 := asyncio.CreateTask(tk, acquireFn(sem))
		t2 := asyncio.CreateTask(tk, acquireFn(sem))
		t3 := asyncio.CreateTask(tk, acquireFn(sem))
		t4 := asyncio.CreateTask(tk, acquireFn(sem))
		asyncio.Sleep(tk, 0)
		t1.Cancel()
		t2.Cancel()
		sem.Release()
		asyncio.Sleep(tk, 0)
		asyncio.Sleep(tk, 0)
		numDone := 0
		for _, task := range []*asyncio.Task[struct{}]{t3, t4} {
			if task.Done() {
				numDone++
			}
		}
		eq(t, numDone, 1)
		check(t, t3.Done(), "t3 done")
		check(t, !t4.Done(), "t4 not done")
		t3.Cancel()
		t4.Cancel()
		asyncio.Sleep(tk, 0)
		return nil
	})
}

func TestLocks_test_acquire_hang(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(0)
		t1 := asyncio.CreateTask(tk, acquireFn(sem))
		t2 := asyncio.CreateTask(tk, acquireFn(sem))
		asyncio.Sleep(tk, 0)
		t1.Cancel()
		sem.Release()
		asyncio.Sleep(tk, 0)
		asyncio.Sleep(tk, 0)
		check(t, sem.Locked(), "locked")
		check(t, t2.Done(), "t2 done")
		return nil
	})
}

func TestLocks_test_acquire_no_hang(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		var t2 *asyncio.Task[struct{}]
		t1 := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := sem.Acquire(tk); err != nil {
				return err
			}
			asyncio.Sleep(tk, 0)
			sem.Release()
			t2.Cancel()
			return nil
		}))
		t2 = asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if err := sem.Acquire(tk); err != nil {
				return err
			}
			defer sem.Release()
			t.Error("c2 acquired the semaphore")
			return nil
		}))
		res, err := asyncio.GatherOutcomes[struct{}](tk, t1, t2).Await(tk)
		if err != nil {
			return err
		}
		check(t, res[0].Err == nil, "r1 is None")
		cancelled(t, res[1].Err, "r2")
		_, err = asyncio.WaitForFunc(tk, 1000*ms, acquireFn(sem))
		return err
	})
}

func TestLocks_SemaphoreTests_test_release_not_acquired(t *testing.T) {
	raises(t, asyncio.NewBoundedSemaphore(1).Release(), "*asyncio.ValueError")
}

func TestLocks_SemaphoreTests_test_release_no_waiters(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		noErr(t, sem.Acquire(tk))
		check(t, sem.Locked(), "locked")
		sem.Release()
		check(t, !sem.Locked(), "not locked")
		return nil
	})
}

func TestLocks_test_acquire_fifo_order(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		var result []string
		coro := func(tag string) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error {
				for _, n := range []string{"_1", "_2"} {
					if err := sem.Acquire(tk); err != nil {
						return err
					}
					result = append(result, tag+n)
					asyncio.Sleep(tk, 10*ms)
					sem.Release()
				}
				return nil
			})
		}
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, coro("c1"))
			spawn(t, g, coro("c2"))
			spawn(t, g, coro("c3"))
			return nil
		})
		eq(t, result, []string{"c1_1", "c2_1", "c3_1", "c1_2", "c2_2", "c3_2"})
		return err
	})
}

func TestLocks_test_acquire_fifo_order_2(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(1)
		var result []int
		t1 := asyncio.CreateTask(tk, acquirer(sem, &result, 1))
		t2 := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			if err := sem.Acquire(tk); err != nil {
				return false, err
			}
			result = append(result, 2)
			sem.Release()
			if err := sem.Acquire(tk); err != nil {
				return false, err
			}
			result = append(result, 4)
			return true, nil
		})
		t3 := asyncio.CreateTask(tk, acquirer(sem, &result, 3))
		asyncio.Sleep(tk, 0)
		sem.Release()
		sem.Release()
		_, err := asyncio.Gather[bool](tk, t1, t2, t3).Await(tk)
		eq(t, result, []int{1, 2, 3, 4})
		return err
	})
}

func TestLocks_test_acquire_fifo_order_3(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(0)
		var result []int
		t1 := asyncio.CreateTask(tk, acquirer(sem, &result, 1))
		t2 := asyncio.CreateTask(tk, acquirer(sem, &result, 2))
		t3 := asyncio.CreateTask(tk, acquirer(sem, &result, 3))
		asyncio.Sleep(tk, 0)
		t1.Cancel()
		asyncio.Sleep(tk, 0)
		sem.Release()
		sem.Release()
		_, err := asyncio.GatherOutcomes[bool](tk, t1, t2, t3).Await(tk)
		eq(t, result, []int{2, 3})
		return err
	})
}

func TestLocks_test_acquire_fifo_order_4(t *testing.T) {
	// A successful acquire() wakes up several tasks waiting in the
	// semaphore's queue, by FIFO rules. (sem._value is private; its repr
	// shows it when unlocked.)
	run(t, func(tk *asyncio.T) error {
		sem := asyncio.NewSemaphore(0)
		var result []int
		var t4 *asyncio.Task[bool]
		c4 := func(*asyncio.T) (bool, error) { result = append(result, 4); return true, nil }
		t1 := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			// First task immediately waits for semaphore. It will be
			// awoken by c2.
			if err := sem.Acquire(tk); err != nil {
				return false, err
			}
			// Create a fourth task. It should run after c3, not c2.
			t4 = asyncio.CreateTask(tk, c4)
			result = append(result, 1)
			return true, nil
		})
		t2 := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			// The second task begins by releasing semaphore three times,
			// for c1, c2, and c3.
			sem.Release()
			sem.Release()
			sem.Release()
			// It is locked, because c1 hasn't woken up yet.
			check(t, sem.Locked(), "locked")
			if err := sem.Acquire(tk); err != nil {
				return false, err
			}
			result = append(result, 2)
			return true, nil
		})
		t3 := asyncio.CreateTask(tk, func(tk *asyncio.T) (bool, error) {
			if err := sem.Acquire(tk); err != nil {
				return false, err
			}
			check(t, sem.Locked(), "locked")
			result = append(result, 3)
			return true, nil
		})
		asyncio.Sleep(tk, 0)
		// Three tasks are in the queue, the first hasn't woken up yet.
		eq(t, reprWaiters(sem), 3)
		asyncio.Sleep(tk, 0)
		_, err := asyncio.Gather[bool](tk, t1, t2, t3, t4).Await(tk)
		eq(t, result, []int{1, 2, 3, 4})
		return err
	})
}

// barrierWaiters returns n tasks running coro (make_tasks).
func makeTasks[V any](tk *asyncio.T, n int, coro func(*asyncio.T) (V, error)) []asyncio.AwaitableOf[V] {
	out := make([]asyncio.AwaitableOf[V], n)
	for i := range out {
		out[i] = asyncio.CreateTask(tk, coro)
	}
	return out
}

// gatherTasks is gather_tasks: make n tasks and gather them.
func gatherTasks[V any](t *testing.T, tk *asyncio.T, n int, coro func(*asyncio.T) (V, error)) []V {
	res, err := asyncio.Gather(tk, makeTasks(tk, n, coro)...).Await(tk)
	noErr(t, err, "gather")
	return res
}

func barrierWait(b *asyncio.Barrier) func(*asyncio.T) (int, error) { return b.Wait }

const nParties = 5 // BarrierTests.N

func TestLocks_BarrierTests_test_repr(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		check(t, rgxRepr.MatchString(barrier.String()), barrier)
		check(t, strings.Contains(barrier.String(), "filling"), barrier)
		var waiters []asyncio.Awaitable
		incr := 2
		for range incr {
			waiters = append(waiters, asyncio.CreateTask(tk, barrierWait(barrier)))
		}
		asyncio.Sleep(tk, 0)
		check(t, rgxRepr.MatchString(barrier.String()), barrier)
		check(t, strings.Contains(barrier.String(), "waiters:2/5"), barrier)
		check(t, strings.Contains(barrier.String(), "filling"), barrier)
		// create missing waiters
		for range barrier.Parties() - barrier.Waiting() {
			waiters = append(waiters, asyncio.CreateTask(tk, barrierWait(barrier)))
		}
		asyncio.Sleep(tk, 0)
		check(t, rgxRepr.MatchString(barrier.String()), barrier)
		check(t, strings.Contains(barrier.String(), "draining"), barrier)
		// add a part of waiters
		for range incr {
			waiters = append(waiters, asyncio.CreateTask(tk, barrierWait(barrier)))
		}
		asyncio.Sleep(tk, 0)
		// and reset
		barrier.Reset()
		check(t, rgxRepr.MatchString(barrier.String()), barrier)
		check(t, strings.Contains(barrier.String(), "resetting"), barrier)
		// add a part of waiters again
		for range incr {
			waiters = append(waiters, asyncio.CreateTask(tk, barrierWait(barrier)))
		}
		asyncio.Sleep(tk, 0)
		// and abort
		barrier.Abort()
		check(t, rgxRepr.MatchString(barrier.String()), barrier)
		check(t, strings.Contains(barrier.String(), "broken"), barrier)
		check(t, barrier.Broken(), "broken")
		// suppress unhandled exceptions
		asyncio.GatherAnyOutcomes(tk, waiters...).Await(tk)
		return nil
	})
}

func TestLocks_test_barrier_parties(t *testing.T) {
	for _, n := range []int{0, -4} {
		func() {
			defer func() {
				err, _ := recover().(error)
				check(t, errors.Is(err, asyncio.ErrValue), "Barrier(", n, ") panics with a ValueError")
			}()
			asyncio.NewBarrier(n)
		}()
	}
	check(t, asyncio.NewBarrier(nParties) != nil, "Barrier(N)")
}

func TestLocks_BarrierTests_test_context_manager(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		n := 3
		barrier := asyncio.NewBarrier(n)
		var results []int
		gatherTasks(t, tk, n, fn0(func(tk *asyncio.T) error {
			i, err := barrier.Wait(tk) // async with barrier as i
			if err != nil {
				return err
			}
			results = append(results, i)
			return nil
		}))
		slices.Sort(results)
		eq(t, results, []int{0, 1, 2})
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_filling_one_task(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(1)
		_, err := barrier.Wait(tk)
		noErr(t, err)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_filling_one_task_twice(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(1)
		t1 := asyncio.CreateTask(tk, barrierWait(barrier))
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 0)
		t2 := asyncio.CreateTask(tk, barrierWait(barrier))
		asyncio.Sleep(tk, 0)
		eq(t, result(t, t1), result(t, t2))
		eq(t, t1.Done(), t2.Done())
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_filling_task_by_task(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(3)
		t1 := asyncio.CreateTask(tk, barrierWait(barrier))
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 1)
		check(t, strings.Contains(barrier.String(), "filling"), barrier)
		t2 := asyncio.CreateTask(tk, barrierWait(barrier))
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 2)
		check(t, strings.Contains(barrier.String(), "filling"), barrier)
		t3 := asyncio.CreateTask(tk, barrierWait(barrier))
		asyncio.Sleep(tk, 0)
		asyncio.Wait(tk, []asyncio.Awaitable{t1, t2, t3}, asyncio.Never, asyncio.AllCompleted)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_filling_tasks_wait_twice(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results []bool
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results = append(results, true)
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results = append(results, false)
			return nil
		}))
		eq(t, len(results), nParties*2)
		eq(t, countOf(results, true), nParties)
		eq(t, countOf(results, false), nParties)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func countOf[V comparable](s []V, v V) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func TestLocks_test_filling_tasks_check_return_value(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2 []bool
		res := gatherTasks(t, tk, nParties, func(tk *asyncio.T) (int, error) {
			if _, err := barrier.Wait(tk); err != nil {
				return 0, err
			}
			results1 = append(results1, true)
			i, err := barrier.Wait(tk)
			if err != nil {
				return 0, err
			}
			results2 = append(results2, true)
			return i, nil
		})
		eq(t, countOf(results1, true), nParties)
		eq(t, countOf(results2, true), nParties)
		slices.Sort(res)
		eq(t, res, []int{0, 1, 2, 3, 4})
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_draining_state(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results []bool
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			// barrier state change to filling for the last task release
			results = append(results, strings.Contains(barrier.String(), "draining"))
			return nil
		}))
		eq(t, len(results), nParties)
		eq(t, results[nParties-1], false)
		eq(t, countOf(results[:nParties-1], true), nParties-1)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_blocking_tasks_while_draining(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		rewait := 2
		barrier := asyncio.NewBarrier(nParties)
		barrierNoWaiting := asyncio.NewBarrier(nParties - rewait)
		rewaitN := rewait
		// a success means that barrier_nowaiting was waited for exactly
		// N-rewait=3 times
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			// first time waiting
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			// after waiting once for all tasks
			if rewaitN > 0 {
				rewaitN--
				// wait again only for rewait tasks
				_, err := barrier.Wait(tk)
				return err
			}
			// wait for end of draining state
			if _, err := barrierNoWaiting.Wait(tk); err != nil {
				return err
			}
			// wait for other waiting tasks
			_, err := barrier.Wait(tk)
			return err
		}))
		return nil
	})
}

func TestLocks_test_filling_tasks_cancel_one(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(3)
		var results []bool
		coro := fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results = append(results, true)
			return nil
		})
		t1 := asyncio.CreateTask(tk, coro)
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 1)
		t2 := asyncio.CreateTask(tk, coro)
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 2)
		t1.Cancel()
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 1)
		_, err := t1.Await(tk)
		cancelled(t, err)
		check(t, t1.Cancelled(), "t1 cancelled")
		t3 := asyncio.CreateTask(tk, coro)
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 2)
		t4 := asyncio.CreateTask(tk, coro)
		_, err = asyncio.Gather[struct{}](tk, t2, t3, t4).Await(tk)
		noErr(t, err)
		eq(t, countOf(results, true), 3)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_reset_barrier(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(1)
		asyncio.CreateTask(tk, fn0(func(*asyncio.T) error { barrier.Reset(); return nil }))
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 0)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func isBroken(err error) bool { return errors.Is(err, asyncio.ErrBrokenBarrier) }

func TestLocks_test_reset_barrier_while_tasks_waiting(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results []bool
		// N-1 tasks waiting on barrier with N parties
		tasks := makeTasks(tk, nParties-1, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); isBroken(err) {
				results = append(results, true)
			} else if err != nil {
				return err
			}
			return nil
		}))
		asyncio.Sleep(tk, 0)
		// reset the barrier
		asyncio.CreateTask(tk, fn0(func(*asyncio.T) error { barrier.Reset(); return nil }))
		_, err := asyncio.Gather(tk, tasks...).Await(tk)
		noErr(t, err)
		eq(t, countOf(results, true), nParties-1)
		eq(t, barrier.Waiting(), 0)
		check(t, !strings.Contains(barrier.String(), "resetting"), barrier)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_reset_barrier_when_tasks_half_draining(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1 []bool
		restOfTasks := nParties / 2
		exited := 0 // barrier._count is N minus the tasks that left
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			_, err := barrier.Wait(tk)
			if isBroken(err) {
				// catch here waiting tasks
				results1 = append(results1, true)
				return nil
			}
			if err != nil {
				return err
			}
			exited++
			// here drained task outside the barrier
			if restOfTasks == nParties-exited {
				// tasks outside the barrier
				barrier.Reset()
			}
			return nil
		}))
		eq(t, results1, slices.Repeat([]bool{true}, restOfTasks))
		eq(t, barrier.Waiting(), 0)
		check(t, !strings.Contains(barrier.String(), "resetting"), barrier)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_reset_barrier_when_tasks_half_draining_half_blocking(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2 []bool
		blockingTasks := nParties / 2
		count := 0
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			_, err := barrier.Wait(tk)
			if isBroken(err) {
				// here catch still waiting tasks
				results1 = append(results1, true)
				// so now waiting again to reach nb_parties
				_, err := barrier.Wait(tk)
				return err
			}
			if err != nil {
				return err
			}
			count++
			if count > blockingTasks {
				// reset now: raise asyncio.BrokenBarrierError for waiting tasks
				barrier.Reset()
				// so now waiting again to reach nb_parties
				_, err := barrier.Wait(tk)
				return err
			}
			if _, err := barrier.Wait(tk); isBroken(err) {
				// here no catch - blocked tasks go to wait
				results2 = append(results2, true)
			} else if err != nil {
				return err
			}
			return nil
		}))
		eq(t, results1, slices.Repeat([]bool{true}, blockingTasks))
		eq(t, results2, []bool(nil))
		eq(t, barrier.Waiting(), 0)
		check(t, !strings.Contains(barrier.String(), "resetting"), barrier)
		check(t, !barrier.Broken(), "not broken")
		return nil
	})
}

func TestLocks_test_reset_barrier_while_tasks_waiting_and_waiting_again(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2 []bool
		tasks := makeTasks(tk, nParties-1, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); isBroken(err) {
				results1 = append(results1, true)
			} else if err != nil {
				return err
			}
			// finally:
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results2 = append(results2, true)
			return nil
		}))
		// reset barrier, N-1 waiting tasks raise an BrokenBarrierError
		asyncio.CreateTask(tk, fn0(func(*asyncio.T) error { barrier.Reset(); return nil }))
		asyncio.Sleep(tk, 0)
		// complete waiting tasks in the `finally`
		asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results2 = append(results2, true)
			return nil
		}))
		_, err := asyncio.Gather(tk, tasks...).Await(tk)
		noErr(t, err)
		check(t, !barrier.Broken(), "not broken")
		eq(t, countOf(results1, true), nParties-1)
		eq(t, countOf(results2, true), nParties)
		eq(t, barrier.Waiting(), 0)
		return nil
	})
}

func TestLocks_test_reset_barrier_while_tasks_draining(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2, results3 []bool
		count := 0
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			count++
			if count == nParties {
				// last task exited from barrier
				barrier.Reset()
				// wait here to reach the `parties`
				if _, err := barrier.Wait(tk); err != nil {
					return err
				}
			} else {
				// second waiting
				if _, err := barrier.Wait(tk); err != nil {
					// never goes here
					results2 = append(results2, true)
				} else {
					// N-1 tasks here
					results1 = append(results1, true)
				}
			}
			// Now, pass the barrier again; last wait, must be completed
			if _, err := barrier.Wait(tk); err != nil {
				return err
			}
			results3 = append(results3, true)
			return nil
		}))
		check(t, !barrier.Broken(), "not broken")
		eq(t, countOf(results1, true), nParties-1)
		eq(t, len(results2), 0)
		eq(t, countOf(results3, true), nParties)
		eq(t, barrier.Waiting(), 0)
		return nil
	})
}

func TestLocks_test_abort_barrier(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(1)
		asyncio.CreateTask(tk, fn0(func(*asyncio.T) error { barrier.Abort(); return nil }))
		asyncio.Sleep(tk, 0)
		eq(t, barrier.Waiting(), 0)
		check(t, barrier.Broken(), "broken")
		return nil
	})
}

func TestLocks_test_abort_barrier_when_tasks_half_draining_half_blocking(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2 []bool
		blockingTasks := nParties / 2
		count := 0
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			_, err := barrier.Wait(tk)
			if isBroken(err) {
				// here catch tasks waiting to drain
				results1 = append(results1, true)
				return nil
			}
			if err != nil {
				return err
			}
			count++
			if count > blockingTasks {
				// abort now: raise asyncio.BrokenBarrierError for all tasks
				barrier.Abort()
				return nil
			}
			if _, err := barrier.Wait(tk); isBroken(err) {
				// here catch blocked tasks (already drained)
				results2 = append(results2, true)
			} else if err != nil {
				return err
			}
			return nil
		}))
		check(t, barrier.Broken(), "broken")
		eq(t, results1, slices.Repeat([]bool{true}, blockingTasks))
		eq(t, results2, slices.Repeat([]bool{true}, nParties-blockingTasks-1))
		eq(t, barrier.Waiting(), 0)
		check(t, !strings.Contains(barrier.String(), "resetting"), barrier)
		return nil
	})
}

func TestLocks_test_abort_barrier_when_exception(t *testing.T) {
	// test from threading.Barrier: see `lock_tests.test_reset`
	run(t, func(tk *asyncio.T) error {
		barrier := asyncio.NewBarrier(nParties)
		var results1, results2 []bool
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			err := func() error {
				i, err := barrier.Wait(tk) // async with barrier as i
				if err != nil {
					return err
				}
				if i == nParties/2 {
					return exc("RuntimeError")
				}
				if _, err := barrier.Wait(tk); err != nil {
					return err
				}
				results1 = append(results1, true)
				return nil
			}()
			switch {
			case isBroken(err):
				results2 = append(results2, true)
			case isClass(err, "RuntimeError"):
				barrier.Abort()
			case err != nil:
				return err
			}
			return nil
		}))
		check(t, barrier.Broken(), "broken")
		eq(t, len(results1), 0)
		eq(t, countOf(results2, true), nParties-1)
		eq(t, barrier.Waiting(), 0)
		return nil
	})
}

func TestLocks_test_abort_barrier_when_exception_then_resetting(t *testing.T) {
	// test from threading.Barrier: see `lock_tests.test_abort_and_reset`
	run(t, func(tk *asyncio.T) error {
		barrier1 := asyncio.NewBarrier(nParties)
		barrier2 := asyncio.NewBarrier(nParties)
		var results1, results2, results3 []bool
		gatherTasks(t, tk, nParties, fn0(func(tk *asyncio.T) error {
			err := func() error {
				i, err := barrier1.Wait(tk)
				if err != nil {
					return err
				}
				if i == nParties/2 {
					return exc("RuntimeError")
				}
				if _, err := barrier1.Wait(tk); err != nil {
					return err
				}
				results1 = append(results1, true)
				return nil
			}()
			switch {
			case isBroken(err):
				results2 = append(results2, true)
			case isClass(err, "RuntimeError"):
				barrier1.Abort()
			case err != nil:
				return err
			}
			// Synchronize and reset the barrier. Must synchronize first so
			// that everyone has left it when we reset, and after so that
			// no one enters it before the reset.
			i, err := barrier2.Wait(tk)
			if err != nil {
				return err
			}
			if i == nParties/2 {
				barrier1.Reset()
			}
			if _, err := barrier2.Wait(tk); err != nil {
				return err
			}
			if _, err := barrier1.Wait(tk); err != nil {
				return err
			}
			results3 = append(results3, true)
			return nil
		}))
		check(t, !barrier1.Broken(), "not broken")
		eq(t, len(results1), 0)
		eq(t, countOf(results2, true), nParties-1)
		eq(t, countOf(results3, true), nParties)
		eq(t, barrier1.Waiting(), 0)
		return nil
	})
}
