package wronghandle

import (
	"context"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases for the APIs added after the first version of the check.

// Positive cases.
func bridgeWithOuter(t *asyncio.T) error {
	tk := asyncio.CreateTaskErr(t, func(own *asyncio.T) error {
		_, err := asyncio.Go(t, func(ctx context.Context) (int, error) { return 0, nil }) // want `asyncio.Go awaits with t, the handle of an enclosing task`
		return err
	})
	_, err := tk.Await(t)
	return err
}

func channelsWithOuter(t *asyncio.T, ch chan int) error {
	tk := asyncio.CreateTask(t, func(own *asyncio.T) (int, error) {
		if err := asyncio.Send(t, ch, 1); err != nil { // want `asyncio.Send awaits with t`
			return 0, err
		}
		v, _, err := asyncio.Recv(t, ch) // want `asyncio.Recv awaits with t`
		return v, err
	}, asyncio.WithEagerStart())
	_, err := tk.Await(t)
	return err
}

func genericWaitWithOuter(t *asyncio.T, tasks []*asyncio.Task[int]) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.SpawnErr(g, func(own *asyncio.T) error {
			_, _, err := asyncio.Wait(t, tasks, time.Second, asyncio.AllCompleted) // want `asyncio.Wait awaits with t`
			return err
		})
		return err
	})
}

// Negative cases.
func bridgeWithOwn(t *asyncio.T) error {
	tk := asyncio.CreateTaskErr(t, func(own *asyncio.T) error {
		_, err := asyncio.Go(own, func(ctx context.Context) (int, error) { return 0, nil })
		return err
	})
	_, err := tk.Await(t)
	return err
}

func executorOnOuterLoop(t *asyncio.T) error {
	tk := asyncio.CreateTaskErr(t, func(own *asyncio.T) error {
		// RunInExecutorOn takes a loop owner, not the running task: any
		// task of the loop will do.
		f := asyncio.RunInExecutorOn(t, nil, func(ctx context.Context) (int, error) { return 0, nil })
		_, err := f.Await(own)
		return err
	})
	_, err := tk.Await(t)
	return err
}

func genericWaitWithOwn(t *asyncio.T, tasks []*asyncio.Task[int]) error {
	tk := asyncio.CreateTaskErr(t, func(own *asyncio.T) error {
		for _, err := range asyncio.AsCompleted(own, tasks, 0) {
			if err != nil {
				return err
			}
		}
		return nil
	})
	_, err := tk.Await(t)
	return err
}
