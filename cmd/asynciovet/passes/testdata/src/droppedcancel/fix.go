package droppedcancel

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func sleeps(t *asyncio.T) error {
	asyncio.Sleep(t, time.Second) // want `the error of asyncio.Sleep is discarded: a cancellation is swallowed and the task carries on`
	return nil
}

func blank(t *asyncio.T, lk *asyncio.Lock) (int, error) {
	_ = lk.Acquire(t) // want `the error of asyncio.Lock.Acquire is assigned to _`
	defer lk.Release()
	return 1, nil
}

func awaitsTask(t *asyncio.T, tk *asyncio.Task[string]) ([]byte, error) {
	tk.Await(t) // want `the error of asyncio.Task.Await is discarded`
	return nil, nil
}

func group(t *asyncio.T) (struct{}, error) {
	_, _ = asyncio.WaitFor[int](t, time.Second, nil)    // want `the error of asyncio.WaitFor is assigned to _`
	asyncio.TaskGroup(t, func(g *asyncio.Group) error { // want `the error of asyncio.TaskGroup is discarded`
		asyncio.Sleep(t, 0) // want `the error of asyncio.Sleep is discarded`
		return nil
	})
	return struct{}{}, nil
}
