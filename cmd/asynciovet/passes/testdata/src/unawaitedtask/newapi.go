package unawaitedtask

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func workErr(t *asyncio.T) error { return asyncio.Sleep(t, time.Millisecond) }

// Positive cases.
func discardedErr(t *asyncio.T) error {
	asyncio.CreateTaskErr(t, workErr) // want `the task started by CreateTask is never awaited`
	return nil
}

func discardedEager(t *asyncio.T) error {
	_ = asyncio.CreateTask(t, work, asyncio.WithEagerStart()) // want `the task started by CreateTask is never awaited`
	return nil
}

func unusedErr(t *asyncio.T) error {
	tk := asyncio.CreateTaskErr(t, workErr) // want `the task started by CreateTask is never awaited`
	_ = tk
	return nil
}

// Negative cases.
func awaitedErr(t *asyncio.T) error {
	tk := asyncio.CreateTaskErr(t, workErr)
	_, err := tk.Await(t)
	return err
}

func waitedGeneric(t *asyncio.T) error {
	a := asyncio.CreateTask(t, work)
	b := asyncio.CreateTask(t, work)
	_, _, err := asyncio.Wait(t, []*asyncio.Task[int]{a, b}, 0, asyncio.AllCompleted)
	return err
}

func asCompletedGeneric(t *asyncio.T) error {
	tasks := []*asyncio.Task[int]{asyncio.CreateTask(t, work)}
	for _, err := range asyncio.AsCompleted(t, tasks, 0) {
		if err != nil {
			return err
		}
	}
	return nil
}

func handedToThreadsafe(t *asyncio.T) *asyncio.ConcurrentFuture[struct{}] {
	tk := asyncio.CreateTaskErr(t, workErr)
	return asyncio.Threadsafe[struct{}](tk)
}

func spawnedErr(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.SpawnErr(g, workErr)
		return err
	})
}
