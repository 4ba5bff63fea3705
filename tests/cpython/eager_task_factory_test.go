package cpython

// CPython 3.13 Lib/test/test_asyncio/test_eager_task_factory.py. The loop
// with asyncio.eager_task_factory is a loop made with
// asyncio.WithEagerTasks(); run_coro(coro) runs the test's coroutine as a
// task of that loop (created before the loop runs, so its own first step is
// scheduled, as in CPython).

import (
	"slices"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// runEager is EagerTaskFactoryLoopTests.run_coro: body runs as a task of a
// loop with the eager task factory.
func runEager[V any](t *testing.T, body func(tk *asyncio.T) (V, error)) (V, error) {
	loop := newLoop(t, asyncio.WithEagerTasks())
	task := asyncio.CreateTask(loop, func(tk *asyncio.T) (V, error) {
		check(t, tk.Loop().IsRunning(), "the loop is running")
		return body(tk)
	})
	if err := loop.RunUntilComplete(task); err != nil {
		var zero V
		return zero, err
	}
	return task.Result()
}

func TestEagerTaskFactory_test_eager_task_factory_set(t *testing.T) {
	// The factory is set: every task of the loop starts eagerly.
	_, err := runEager(t, func(tk *asyncio.T) (int, error) {
		noop := asyncio.CreateTask(tk, func(*asyncio.T) (int, error) { return 0, nil })
		check(t, noop.Done(), "created by the eager factory: done at once")
		return noop.Await(tk)
	})
	noErr(t, err)
}

func TestEagerTaskFactory_test_await_future_during_eager_step(t *testing.T) {
	v, err := runEager(t, func(tk *asyncio.T) (string, error) {
		fut := asyncio.NewFuture[string](tk)
		task := asyncio.CreateTask(tk, fn0(func(*asyncio.T) error { return fut.SetResult("my message") }))
		// assert the eager step completed the task
		check(t, task.Done(), "t.done()")
		return fut.Await(tk)
	})
	noErr(t, err)
	eq(t, v, "my message")
}

func TestEagerTaskFactory_test_eager_completion(t *testing.T) {
	v, err := runEager(t, func(tk *asyncio.T) (string, error) {
		task := asyncio.CreateTask(tk, func(*asyncio.T) (string, error) { return "hello", nil })
		// assert the eager step completed the task
		check(t, task.Done(), "t.done()")
		return task.Await(tk)
	})
	noErr(t, err)
	eq(t, v, "hello")
}

func TestEagerTaskFactory_test_block_after_eager_step(t *testing.T) {
	v, err := runEager(t, func(tk *asyncio.T) (string, error) {
		task := asyncio.CreateTask(tk, sleepReturn(100*ms, "finished after blocking"))
		check(t, !task.Done(), "not done")
		res, err := task.Await(tk)
		check(t, task.Done(), "done")
		return res, err
	})
	noErr(t, err)
	eq(t, v, "finished after blocking")
}

func TestEagerTaskFactory_test_cancellation_after_eager_completion(t *testing.T) {
	v, err := runEager(t, func(tk *asyncio.T) (string, error) {
		task := asyncio.CreateTask(tk, func(*asyncio.T) (string, error) { return "finished without blocking", nil })
		task.Cancel()
		res, err := task.Await(tk)
		// finished task can't be cancelled
		check(t, !task.Cancelled(), "not cancelled")
		return res, err
	})
	noErr(t, err)
	eq(t, v, "finished without blocking")
}

func TestEagerTaskFactory_test_cancellation_after_eager_step_blocks(t *testing.T) {
	_, err := runEager(t, func(tk *asyncio.T) (string, error) {
		task := asyncio.CreateTask(tk, sleepReturn(100*ms, "finished after blocking"))
		task.Cancel("cancellation message")
		check(t, task.Cancelling() > 0, "cancelling() > 0")
		return task.Await(tk)
	})
	eq(t, cancelledMsg(t, err), "cancellation message")
}

func TestEagerTaskFactory_test_current_task(t *testing.T) {
	_, err := runEager(t, func(tk *asyncio.T) (struct{}, error) {
		var captured *asyncio.T
		task := asyncio.CreateTask(tk, fn0(func(ct *asyncio.T) error {
			captured = asyncio.CurrentTask(ct)
			// verify the task before and after blocking is identical
			if err := asyncio.Sleep(ct, 100*ms); err != nil {
				return err
			}
			check(t, asyncio.CurrentTask(ct) == captured, "current_task() is captured_current_task")
			return nil
		}))
		check(t, captured == task.T(), "captured_current_task is t")
		return task.Await(tk)
	})
	noErr(t, err)
}

func TestEagerTaskFactory_test_all_tasks_with_eager_completion(t *testing.T) {
	_, err := runEager(t, func(tk *asyncio.T) (struct{}, error) {
		var captured []*asyncio.T
		task := asyncio.CreateTask(tk, fn0(func(ct *asyncio.T) error {
			captured = asyncio.AllTasks(ct)
			return nil
		}))
		check(t, slices.Contains(captured, task.T()), "t in captured_all_tasks")
		check(t, !slices.Contains(asyncio.AllTasks(tk), task.T()), "t not in all_tasks()")
		return struct{}{}, nil
	})
	noErr(t, err)
}

func TestEagerTaskFactory_test_all_tasks_with_blocking(t *testing.T) {
	_, err := runEager(t, func(tk *asyncio.T) (struct{}, error) {
		fut1 := asyncio.NewFuture[struct{}](tk)
		fut2 := asyncio.NewFuture[struct{}](tk)
		var captured []*asyncio.T
		task := asyncio.CreateTask(tk, fn0(func(ct *asyncio.T) error {
			captured = asyncio.AllTasks(ct)
			if _, err := fut1.Await(ct); err != nil {
				return err
			}
			return fut2.SetResult(struct{}{})
		}))
		check(t, slices.Contains(captured, task.T()), "t in captured_eager_all_tasks")
		check(t, slices.Contains(asyncio.AllTasks(tk), task.T()), "t in all_tasks()")
		fut1.SetResult(struct{}{})
		if _, err := fut2.Await(tk); err != nil {
			return struct{}{}, err
		}
		check(t, !slices.Contains(asyncio.AllTasks(tk), task.T()), "t not in all_tasks()")
		return struct{}{}, nil
	})
	noErr(t, err)
}

func TestEagerTaskFactory_test_context_vars(t *testing.T) {
	cv := asyncio.NewContextVar("cv", 0)
	_, err := runEager(t, func(tk *asyncio.T) (struct{}, error) {
		firstStepRan, secondStepRan := false, false
		cv.Set(tk, 1)
		task := asyncio.CreateTask(tk, fn0(func(ct *asyncio.T) error {
			eq(t, cv.Get(ct), 1, "the eager step sees the creator's value")
			cv.Set(ct, 2)
			eq(t, cv.Get(ct), 2)
			firstStepRan = true
			if err := asyncio.Sleep(ct, 100*ms); err != nil {
				return err
			}
			eq(t, cv.Get(ct), 2)
			cv.Set(ct, 3)
			eq(t, cv.Get(ct), 3)
			secondStepRan = true
			return nil
		}))
		check(t, firstStepRan, "coro_first_step_ran")
		check(t, !secondStepRan, "not coro_second_step_ran")
		eq(t, cv.Get(tk), 1, "the eager step's Set does not reach the creator")
		_, err := task.Await(tk)
		check(t, secondStepRan, "coro_second_step_ran")
		eq(t, cv.Get(tk), 1)
		return struct{}{}, err
	})
	noErr(t, err)
}

// scheduledCounter counts the tasks whose first step is scheduled (not
// run eagerly inside CreateTask): CPython's AsyncTaskCounter counts the
// tasks created with eager_start=False. A task records the loop iteration
// at its creation and compares it with the one of its first step.
type scheduledCounter struct {
	iteration int
	scheduled int
}

// tick counts l's iterations: a callback that reschedules itself runs once
// in each.
func (c *scheduledCounter) tick(l *asyncio.Loop) {
	l.CallSoon(func() { c.iteration++; c.tick(l) })
}

// wrap returns fn so that it counts itself if its first step runs in a
// later iteration than its creation (now).
func (c *scheduledCounter) wrap(fn func(*asyncio.T) (struct{}, error)) func(*asyncio.T) (struct{}, error) {
	created := c.iteration
	return func(tk *asyncio.T) (struct{}, error) {
		if c.iteration != created {
			c.scheduled++
		}
		return fn(tk)
	}
}

// taskCounting is BaseTaskCountingTests: body runs as the main task of a
// loop with or without the eager factory; it returns the number of tasks
// created without eager start. The main task is created before the loop
// runs, so its first step is scheduled either way; CPython counts it only
// without the eager factory (it is created with eager_start=True there).
func taskCounting(t *testing.T, eager bool, body func(c *scheduledCounter) func(*asyncio.T) (struct{}, error)) int {
	var opts []asyncio.LoopOption
	if eager {
		opts = append(opts, asyncio.WithEagerTasks())
	}
	loop := newLoop(t, opts...)
	c := &scheduledCounter{}
	c.tick(loop)
	main := asyncio.CreateTask(loop, body(c))
	noErr(t, loop.RunUntilComplete(main))
	if eager {
		return c.scheduled
	}
	return c.scheduled + 1 // the main task
}

// awaitableChain is `async def awaitable_chain(depth)`: awaiting a
// coroutine is a plain call.
func awaitableChain(depth int) int {
	if depth == 0 {
		return 0
	}
	return 1 + awaitableChain(depth-1)
}

func recursiveTaskGroups(c *scheduledCounter, width, depth int) func(*asyncio.T) (struct{}, error) {
	return fn0(func(tk *asyncio.T) error {
		if depth == 0 {
			return nil
		}
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for range width {
				if _, err := asyncio.Spawn(g, c.wrap(recursiveTaskGroups(c, width, depth-1))); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func recursiveGather(c *scheduledCounter, width, depth int) func(*asyncio.T) (struct{}, error) {
	return fn0(func(tk *asyncio.T) error {
		if depth == 0 {
			return nil
		}
		fns := make([]func(*asyncio.T) (struct{}, error), width)
		for i := range fns {
			fns[i] = c.wrap(recursiveGather(c, width, depth-1))
		}
		_, err := asyncio.GatherFuncs(tk, fns...).Await(tk)
		return err
	})
}

func TestEagerTaskFactory_test_awaitables_chain(t *testing.T) {
	for _, eager := range []bool{false, true} {
		observedDepth := 0
		n := taskCounting(t, eager, func(c *scheduledCounter) func(*asyncio.T) (struct{}, error) {
			return fn0(func(*asyncio.T) error { observedDepth = awaitableChain(100); return nil })
		})
		eq(t, observedDepth, 100)
		want := 1
		if eager {
			want = 0
		}
		eq(t, n, want, "task count, eager=", eager)
	}
}

func TestEagerTaskFactory_test_recursive_taskgroups(t *testing.T) {
	for _, eager := range []bool{false, true} {
		n := taskCounting(t, eager, func(c *scheduledCounter) func(*asyncio.T) (struct{}, error) {
			return recursiveTaskGroups(c, 5, 4)
		})
		want := 781 // 1 + 5 + 5^2 + 5^3 + 5^4
		if eager {
			want = 0
		}
		eq(t, n, want, "task count, eager=", eager)
	}
}

func TestEagerTaskFactory_test_recursive_gather(t *testing.T) {
	for _, eager := range []bool{false, true} {
		n := taskCounting(t, eager, func(c *scheduledCounter) func(*asyncio.T) (struct{}, error) {
			return recursiveGather(c, 5, 4)
		})
		want := 781
		if eager {
			want = 0
		}
		eq(t, n, want, "task count, eager=", eager)
	}
}
