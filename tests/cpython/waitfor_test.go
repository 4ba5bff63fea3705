package cpython

// CPython 3.13 Lib/test/test_asyncio/test_waitfor.py. wait_for(coro) is
// WaitForFunc (the coroutine runs in the calling task, 3.12+);
// wait_for(task or future) is WaitFor.

import (
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// epsilon is _EPSILON: a very small timeout, > 0.
const epsilon = 100 * time.Microsecond

// slowTask is SlowTask: it runs for taskTimeout of loop time, ignoring
// cancel requests.
type slowTask struct{ exited bool }

const taskTimeout = 200 * ms

func (s *slowTask) run(tk *asyncio.T) (struct{}, error) {
	exitAt := tk.Loop().Time() + taskTimeout
	for {
		toSleep := exitAt - tk.Loop().Time()
		if toSleep <= 0 {
			break
		}
		asyncio.Sleep(tk, toSleep) // except CancelledError: pass
	}
	s.exited = true
	return struct{}{}, nil
}

func TestWaitFor_test_asyncio_wait_for_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		s := &slowTask{}
		waitForTask := asyncio.CreateTask(tk, func(tk *asyncio.T) (struct{}, error) {
			return asyncio.WaitForFunc(tk, taskTimeout*2, s.run)
		})
		asyncio.Sleep(tk, 0)
		waitForTask.Cancel()
		asyncio.Wait(tk, []asyncio.Awaitable{waitForTask}, asyncio.Never, asyncio.AllCompleted)
		check(t, s.exited, "t.exited")
		return nil
	})
}

func TestWaitFor_test_asyncio_wait_for_timeout(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		s := &slowTask{}
		_, err := asyncio.WaitForFunc(tk, taskTimeout/2, s.run)
		if err != nil {
			raises(t, err, "TimeoutError")
		}
		check(t, s.exited, "t.exited")
		return nil
	})
}

func TestWaitFor_test_wait_for_timeout_less_then_0_or_0_future_done(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fut := asyncio.NewFuture[string](tk)
		fut.SetResult("done")
		ret, err := asyncio.WaitFor[string](tk, 0, fut)
		noErr(t, err)
		eq(t, ret, "done")
		check(t, fut.Done(), "fut.done()")
		return nil
	})
}

func TestWaitFor_test_wait_for_timeout_less_then_0_or_0_coroutine_do_not_started(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fooStarted := false
		_, err := asyncio.WaitForFunc(tk, 0, fn0(func(*asyncio.T) error { fooStarted = true; return nil }))
		raises(t, err, "TimeoutError")
		eq(t, fooStarted, false)
		return nil
	})
}

func TestWaitFor_test_wait_for_timeout_less_then_0_or_0(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		for _, timeout := range []time.Duration{0, -1000 * ms} {
			// in the task, not a subtest: t.Run's goroutine is not the loop's
			fooRunning := false
			started := asyncio.NewFuture[struct{}](tk)
			fut := asyncio.CreateTask(tk, func(tk *asyncio.T) (string, error) {
				fooRunning = true
				started.SetResult(struct{}{})
				err := asyncio.Sleep(tk, 10000*ms)
				fooRunning = false
				if err != nil {
					return "", err
				}
				return "done", nil
			})
			started.Await(tk)
			_, err := asyncio.WaitFor[string](tk, timeout, fut)
			raises(t, err, "TimeoutError")
			check(t, fut.Done(), "fut.done()")
			// it should have been cancelled due to the timeout
			check(t, fut.Cancelled(), "fut.cancelled()")
			eq(t, fooRunning, false)
		}
		return nil
	})
}

func TestWaitFor_test_wait_for(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fooRunning := false
		fut := asyncio.CreateTask(tk, func(tk *asyncio.T) (string, error) {
			fooRunning = true
			err := asyncio.Sleep(tk, 5*time.Minute) // support.LONG_TIMEOUT
			fooRunning = false
			if err != nil {
				return "", err
			}
			return "done", nil
		})
		_, err := asyncio.WaitFor[string](tk, 100*ms, fut)
		raises(t, err, "TimeoutError")
		check(t, fut.Done(), "fut.done()")
		// it should have been cancelled due to the timeout
		check(t, fut.Cancelled(), "fut.cancelled()")
		eq(t, fooRunning, false)
		return nil
	})
}

func TestWaitFor_test_wait_for_blocking(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		res, err := asyncio.WaitForFunc(tk, asyncio.Never, func(*asyncio.T) (string, error) { return "done", nil })
		noErr(t, err)
		eq(t, res, "done")
		return nil
	})
}

func TestWaitFor_test_wait_for_race_condition(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		fut := asyncio.NewFuture[string](tk)
		tk.Loop().CallSoon(func() { fut.SetResult("ok") })
		res, err := asyncio.WaitFor[string](tk, 200*ms, fut)
		noErr(t, err)
		eq(t, res, "ok")
		return nil
	})
}

func TestWaitFor_test_wait_for_cancellation_race_condition(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		result, err := asyncio.WaitForFunc(tk, 10*ms, func(tk *asyncio.T) (int, error) {
			cancelled(t, asyncio.Sleep(tk, 1000*ms))
			return 1, nil
		})
		noErr(t, err)
		eq(t, result, 1)
		return nil
	})
}

// cancellationTakesTime is inner() of the two waits_for_task_cancellation
// tests: on cancellation it sleeps epsilon more, then re-raises.
func cancellationTakesTime(done *bool) func(*asyncio.T) (struct{}, error) {
	return fn0(func(tk *asyncio.T) error {
		defer func() { *done = true }()
		err := asyncio.Sleep(tk, 10000*ms)
		if asyncio.IsCancelled(err) {
			asyncio.Sleep(tk, epsilon)
		}
		return err
	})
}

func TestWaitFor_test_wait_for_waits_for_task_cancellation(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		taskDone := false
		innerTask := asyncio.CreateTask(tk, cancellationTakesTime(&taskDone))
		_, err := asyncio.WaitFor[struct{}](tk, epsilon, innerTask)
		raises(t, err, "TimeoutError")
		check(t, taskDone, "task_done")
		raises(t, timeoutCause(err), "CancelledError", "chained")
		return nil
	})
}

func TestWaitFor_test_wait_for_waits_for_task_cancellation_w_timeout_0(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		taskDone := false
		foo := func(tk *asyncio.T) error {
			innerTask := asyncio.CreateTask(tk, cancellationTakesTime(&taskDone))
			asyncio.Sleep(tk, epsilon)
			_, err := asyncio.WaitFor[struct{}](tk, 0, innerTask)
			return err
		}
		err := foo(tk)
		raises(t, err, "TimeoutError")
		check(t, taskDone, "task_done")
		raises(t, timeoutCause(err), "CancelledError", "chained")
		return nil
	})
}

func TestWaitFor_test_wait_for_reraises_exception_during_cancellation(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		innerTask := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			asyncio.Sleep(tk, 200*ms)
			return exc("FooException") // finally: raise FooException
		}))
		_, err := asyncio.WaitFor[struct{}](tk, epsilon, innerTask)
		raises(t, err, "FooException")
		return nil
	})
}

// cancelWaitFor is _test_cancel_wait_for.
func cancelWaitFor(t *testing.T, timeout time.Duration) {
	run(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			fut := asyncio.NewFuture[struct{}](tk)
			// Block: fut result is never set
			_, err := fut.Await(tk)
			return err
		}))
		wait := asyncio.CreateTask(tk, func(tk *asyncio.T) (struct{}, error) {
			return asyncio.WaitFor[struct{}](tk, timeout, task)
		})
		tk.Loop().CallSoon(func() { wait.Cancel() })
		_, err := wait.Await(tk)
		cancelled(t, err)
		// Python issue #23219: cancelling the wait must also cancel the task
		check(t, task.Cancelled(), "task.cancelled()")
		return nil
	})
}

func TestWaitFor_test_cancel_blocking_wait_for(t *testing.T) { cancelWaitFor(t, asyncio.Never) }

func TestWaitFor_test_cancel_wait_for(t *testing.T) { cancelWaitFor(t, 60*time.Second) }

func TestWaitFor_test_wait_for_cancel_suppressed(t *testing.T) {
	// gh-86296: a task that suppresses CancelledError and returns a value:
	// wait_for returns the value, as asyncio.timeout does.
	run(t, func(tk *asyncio.T) error {
		res, err := asyncio.WaitForFunc(tk, 100*ms, func(tk *asyncio.T) (int, error) {
			if err := asyncio.Sleep(tk, 10000*ms); asyncio.IsCancelled(err) {
				return 42, nil
			}
			return 0, nil
		})
		noErr(t, err)
		eq(t, res, 42)
		return nil
	})
}

func TestWaitFor_test_wait_for_issue86296(t *testing.T) {
	// gh-86296: The task should get cancelled and not run to completion.
	// inner completes in one cycle of the event loop so it completes
	// before the task is cancelled.
	run(t, func(tk *asyncio.T) error {
		innerTask := asyncio.CreateTask(tk, func(*asyncio.T) (string, error) { return "done", nil })
		reachedEnd := false
		task := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			if _, err := asyncio.WaitFor[string](tk, 100*time.Second, innerTask); err != nil {
				return err
			}
			if err := asyncio.Sleep(tk, 1000*ms); err != nil {
				return err
			}
			reachedEnd = true
			return nil
		}))
		check(t, !task.Done(), "task not done")
		// Run the task
		asyncio.Sleep(tk, 0)
		task.Cancel()
		_, err := task.Await(tk)
		cancelled(t, err)
		check(t, innerTask.Done(), "inner_task.done()")
		v, err := innerTask.Await(tk)
		noErr(t, err)
		eq(t, v, "done")
		check(t, !reachedEnd, "not reached_end")
		return nil
	})
}

func TestWaitFor_test_zero_timeout(t *testing.T) {
	// shield(task) with timeout=0: the shielding future is cancelled at
	// once and the task it wraps keeps running.
	run(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, sleepReturn(10*ms, "done"))
		shielded := asyncio.Shield[string](task)
		_, err := asyncio.WaitFor(tk, 0, shielded)
		raises(t, err, "TimeoutError")
		// Task is running in background
		check(t, !task.Done(), "task not done")
		check(t, !task.Cancelled(), "task not cancelled")
		check(t, shielded.Cancelled(), "shielded_task.cancelled()")
		// Wait for the task to complete
		asyncio.Sleep(tk, 100*ms)
		check(t, task.Done(), "task.done()")
		return nil
	})
}

func TestWaitFor_test_none_timeout(t *testing.T) {
	// With timeout=None the timeout is disabled so it runs till completion.
	run(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, sleepReturn(100*ms, "done"))
		_, err := asyncio.WaitFor(tk, asyncio.Never, asyncio.Shield[string](task))
		noErr(t, err)
		check(t, task.Done(), "task.done()")
		v, err := task.Await(tk)
		noErr(t, err)
		eq(t, v, "done")
		return nil
	})
}

func TestWaitFor_test_shielded_timeout(t *testing.T) {
	// shield prevents the task from being cancelled.
	run(t, func(tk *asyncio.T) error {
		task := asyncio.CreateTask(tk, sleepReturn(100*ms, "done"))
		_, err := asyncio.WaitFor(tk, 10*ms, asyncio.Shield[string](task))
		raises(t, err, "TimeoutError")
		check(t, !task.Done(), "task not done")
		check(t, !task.Cancelled(), "task not cancelled")
		v, err := task.Await(tk)
		noErr(t, err)
		eq(t, v, "done")
		return nil
	})
}
