package main

import (
	"errors"
	"fmt"

	"github.com/go-asyncio/asyncio"
)

// Stand-ins for gather and TaskGroup, built from the core's done callbacks
// and Task.Cancel, until Gather/TaskGroup (branch structured) land on main.
// The JSON "variant" says so, so that these runs are not mistaken for runs
// of the real APIs.
const (
	gatherVariant    = "core-callbacks-gather"
	taskGroupVariant = "core-callbacks-taskgroup"
)

// gatherInts is asyncio.gather(*tasks) for tasks returning int: one done
// callback per child, the results in order once the last one is done.
func gatherInts(t *asyncio.T, tasks []*asyncio.Task[int]) ([]int, error) {
	out := asyncio.NewFuture[[]int](t)
	left := len(tasks)
	for _, tk := range tasks {
		tk.AddDoneCallback(func() {
			if out.Done() {
				return
			}
			if err := tk.Err(); err != nil {
				out.SetException(err)
				return
			}
			left--
			if left > 0 {
				return
			}
			res := make([]int, len(tasks))
			for i, c := range tasks {
				res[i], _ = c.Result()
			}
			out.SetResult(res)
		})
	}
	return out.Await(t)
}

// gatherErrs is asyncio.gather(*tasks, return_exceptions=True) for tasks
// whose values do not matter: each child's error (nil on success).
func gatherErrs(t *asyncio.T, tasks []*asyncio.Task[struct{}]) ([]error, error) {
	out := asyncio.NewFuture[[]error](t)
	left := len(tasks)
	for _, tk := range tasks {
		tk.AddDoneCallback(func() {
			left--
			if left > 0 {
				return
			}
			res := make([]error, len(tasks))
			for i, c := range tasks {
				res[i] = c.Err()
			}
			out.SetResult(res)
		})
	}
	return out.Await(t)
}

// taskGroupSpawn is `async with TaskGroup() as tg: for i in range(n):
// tg.create_task(mk(i))` reduced to what W7/W7f exercise: the first child
// failing with a non-cancellation error cancels the others in creation
// order; the group waits for every child and returns their errors joined.
func taskGroupSpawn(t *asyncio.T, n int, mk func(i int) func(*asyncio.T) (int, error)) ([]*asyncio.Task[int], error) {
	tasks := make([]*asyncio.Task[int], n)
	allDone := asyncio.NewFuture[struct{}](t)
	left := n
	aborting := false
	var errs []error
	for i := range tasks {
		tk := asyncio.CreateTask(t, mk(i))
		tasks[i] = tk
		tk.AddDoneCallback(func() {
			left--
			if !tk.Cancelled() {
				if err := tk.Exception(); err != nil {
					errs = append(errs, err)
					if !aborting {
						aborting = true
						for _, c := range tasks {
							if !c.Done() {
								c.Cancel()
							}
						}
					}
				}
			}
			if left == 0 {
				allDone.SetResult(struct{}{})
			}
		})
	}
	if _, err := allDone.Await(t); err != nil {
		return tasks, err
	}
	if len(errs) > 0 {
		return tasks, &groupError{errs}
	}
	return tasks, nil
}

// groupError stands in for the ExceptionGroup a TaskGroup raises.
type groupError struct{ errs []error }

func (e *groupError) Error() string {
	return fmt.Sprintf("unhandled errors in a TaskGroup (%d sub-exceptions)", len(e.errs))
}
func (e *groupError) Unwrap() []error { return e.errs }

// checkOneValueError is W7f's `except* ValueError` check: the group error
// holds exactly one error, a ValueError.
func checkOneValueError(err error) error {
	var g *groupError
	if !errors.As(err, &g) {
		return fmt.Errorf("task group returned %v, want an exception group", err)
	}
	var ve *valueErrorW7f
	if len(g.errs) != 1 || !errors.As(g.errs[0], &ve) {
		return fmt.Errorf("exception group holds %v, want exactly one ValueError", g.errs)
	}
	return nil
}
