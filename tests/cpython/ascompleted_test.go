package cpython

// test_tasks.py's as_completed tests of the plain-for form (AsCompletedFuncs)
// and of resuming the iterator.

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
)

func TestTasks_test_as_completed_resume_iterator(t *testing.T) {
	// Ranging over AsCompleted's sequence again after a break resumes it
	// (as_completed's iterator, __iter__ called again); the plain-for form
	// is a loop over AsCompletedFuncs, resumed from where it stopped.
	coro := func(i int) func(*asyncio.T) (int, error) {
		return func(*asyncio.T) (int, error) { return i, nil }
	}
	tasks := func(tk *asyncio.T) []asyncio.AwaitableOf[int] {
		var aws []asyncio.AwaitableOf[int]
		for i := range 4 {
			aws = append(aws, asyncio.CreateTask(tk, coro(i)))
		}
		return aws
	}
	tryAsyncIterator := func(tk *asyncio.T) ([]int, error) {
		var collected []int
		seq := asyncio.AsCompleted(tk, tasks(tk), asyncio.Never)
		iterations := 0
		for f, err := range seq {
			if err != nil {
				return nil, err
			}
			v, err := f.Await(tk)
			if err != nil {
				return nil, err
			}
			collected = append(collected, v)
			iterations++
			if iterations == 2 {
				break
			}
		}
		eq(t, len(collected), 2)
		for f, err := range seq { // resume the same iterator
			if err != nil {
				return nil, err
			}
			v, err := f.Await(tk)
			if err != nil {
				return nil, err
			}
			collected = append(collected, v)
		}
		return collected, nil
	}
	tryIterator := func(tk *asyncio.T) ([]int, error) {
		var collected []int
		fns := asyncio.AsCompletedFuncs(tk, tasks(tk), asyncio.Never)
		next := 0
		for ; next < len(fns); next++ {
			v, err := fns[next](tk)
			if err != nil {
				return nil, err
			}
			collected = append(collected, v)
			if next == 1 {
				next++
				break
			}
		}
		eq(t, len(collected), 2)
		for ; next < len(fns); next++ { // resume
			v, err := fns[next](tk)
			if err != nil {
				return nil, err
			}
			collected = append(collected, v)
		}
		return collected, nil
	}
	for _, foo := range []func(*asyncio.T) ([]int, error){tryIterator, tryAsyncIterator} {
		results, err := runTask(newLoop(t), foo)
		noErr(t, err)
		slices.Sort(results)
		eq(t, results, []int{0, 1, 2, 3}, "assertCountEqual")
	}
}

func TestTasks_test_as_completed_reverse_wait(t *testing.T) {
	// The first function awaited gets the first completion, even if it is
	// not the first one as_completed made.
	loop := newLoop(t)
	_, err := runTask(loop, fn0(func(tk *asyncio.T) error {
		a := asyncio.CreateTask(tk, sleepReturn(50*ms, "a"))
		b := asyncio.CreateTask(tk, sleepReturn(100*ms, "b"))
		futs := asyncio.AsCompletedFuncs(tk, []asyncio.AwaitableOf[string]{a, b}, asyncio.Never)
		eq(t, len(futs), 2)
		x, err := futs[1](tk)
		noErr(t, err)
		eq(t, x, "a")
		eq(t, loop.Time(), 50*ms)
		y, err := futs[0](tk)
		noErr(t, err)
		eq(t, y, "b")
		eq(t, loop.Time(), 100*ms)
		return nil
	}))
	noErr(t, err)
}

func TestTasks_test_as_completed_coroutine_use_running_loop(t *testing.T) {
	_, err := runTask(newLoop(t), fn0(func(tk *asyncio.T) error {
		coro := asyncio.CreateTask(tk, func(*asyncio.T) (int, error) { return 42, nil })
		futs := asyncio.AsCompletedFuncs(tk, []asyncio.AwaitableOf[int]{coro}, asyncio.Never)
		eq(t, len(futs), 1)
		v, err := futs[0](tk)
		noErr(t, err)
		eq(t, v, 42)
		return nil
	}))
	noErr(t, err)
}

func TestTasks_test_baseexception_during_cancel(t *testing.T) {
	// SystemExit raised by a task escapes the loop: Go's form is
	// runtime.Goexit in the task, which fails the task and ends the
	// goroutine running the loop (run_briefly does not return). The task
	// is done, not cancelled, with the exit as its error.
	loop := newLoop(t)
	task := asyncio.CreateTask(loop, fn0(func(tk *asyncio.T) error {
		if err := asyncio.Sleep(tk, 10_000*ms); asyncio.IsCancelled(err) {
			runtime.Goexit() // raise base_exc
		}
		return nil
	}))
	runBriefly(loop)
	task.Cancel()
	check(t, !task.Done(), "not task.done()")
	returned := false
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		runBriefly(loop)
		returned = true
	}()
	<-exited
	check(t, !returned, "assertRaises(SystemExit, run_briefly): the loop's goroutine exited")
	check(t, task.Done(), "task.done()")
	check(t, !task.Cancelled(), "not task.cancelled()")
	err := task.Err()
	check(t, err != nil && strings.Contains(err.Error(), "runtime.Goexit"), "task.exception() is the exit:", err)
}
