// Package h48_tasks: tasks kept in slices and maps, awaited by Gather and
// Wait, handed to the caller; and tasks that are dropped.
package h48_tasks

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func job(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, time.Millisecond) }

// Created in a loop, collected, awaited with Wait.
func waitAll(t *asyncio.T) error {
	var tasks []*asyncio.Task[int]
	for i := 0; i < 3; i++ {
		tk := asyncio.CreateTask(t, job)
		tasks = append(tasks, tk)
	}
	_, _, err := asyncio.Wait(t, tasks, asyncio.Never, asyncio.AllCompleted)
	return err
}

// Stored in a map and awaited later.
func byName(t *asyncio.T, names []string) (map[string]int, error) {
	tasks := map[string]*asyncio.Task[int]{}
	for _, n := range names {
		tasks[n] = asyncio.CreateTask(t, job, asyncio.WithName(n))
	}
	out := map[string]int{}
	for n, tk := range tasks {
		v, err := tk.Await(t)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// Returned to the caller.
func startJob(t *asyncio.T) *asyncio.Task[int] {
	tk := asyncio.CreateTask(t, job)
	return tk
}

// Spawned into a TaskGroup: never reported.
func grouped(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := 0; i < 3; i++ {
			if _, err := asyncio.Spawn(g, job); err != nil {
				return err
			}
		}
		return nil
	})
}

// Created in a loop and dropped: the variable is only overwritten.
func droppedInLoop(t *asyncio.T) {
	for i := 0; i < 3; i++ {
		tk := asyncio.CreateTask(t, job) // want `unawaitedtask: the task started by CreateTask`
		_ = tk
	}
}

// Created in a loop, the variable reassigned each time, the last awaited:
// the earlier ones are dropped but one use keeps the variable (a
// documented limit).
func lastOnly(t *asyncio.T) (int, error) {
	var tk *asyncio.Task[int]
	for i := 0; i < 3; i++ {
		tk = asyncio.CreateTask(t, job)
	}
	return tk.Await(t)
}

// Dropped with a var declaration.
func varDecl(t *asyncio.T) {
	var tk = asyncio.CreateTask(t, job) // want `unawaitedtask: the task started by CreateTask`
	tk = nil
	_ = tk
}

// Dropped through the explicit instantiation.
func explicit(t *asyncio.T) {
	asyncio.CreateTask[int](t, job) // want `unawaitedtask: the task started by CreateTask`
}

// CreateTaskErr dropped by a defer.
func errTask(t *asyncio.T) {
	defer asyncio.CreateTaskErr(t, func(c *asyncio.T) error { return nil }) // want `unawaitedtask: the task started by CreateTask`
}

// Kept only by a Cancel: kept (the contract).
func cancelOnly(t *asyncio.T) {
	tk := asyncio.CreateTask(t, job)
	defer tk.Cancel()
}

// Kept by a done callback.
func callbackOnly(t *asyncio.T) {
	tk := asyncio.CreateTask(t, job)
	tk.AddDoneCallback(func() {})
}

// A shadowed variable of the same name: the inner task is dropped, the
// outer awaited.
func shadowed(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, job)
	{
		tk := asyncio.CreateTask(t, job) // want `unawaitedtask: the task started by CreateTask`
		_ = tk
	}
	return tk.Await(t)
}

// Held in a struct passed to the caller.
type pending struct{ tk *asyncio.Task[int] }

func inStruct(t *asyncio.T) pending {
	return pending{tk: asyncio.CreateTask(t, job)}
}

// Gathered via a variadic slice built inline.
func gathered(t *asyncio.T) ([]int, error) {
	a := asyncio.CreateTask(t, job)
	b := asyncio.CreateTask(t, job)
	return asyncio.Gather(t, a, b).Await(t)
}

// A task created inside a generic helper that discards it.
func fire[V any](t *asyncio.T, fn func(*asyncio.T) (V, error)) {
	asyncio.CreateTask(t, fn) // want `unawaitedtask: the task started by CreateTask`
}

// Multiple assignment with the blank identifier.
func multi(t *asyncio.T) (int, error) {
	a, _ := asyncio.CreateTask(t, job), asyncio.CreateTask(t, job) // want `unawaitedtask: the task started by CreateTask`
	return a.Await(t)
}
