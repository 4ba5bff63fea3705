package blockingcall

import (
	"context"
	"os/exec"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Cases for the APIs added after the first version of the check: the
// bridges run their function off the loop, so blocking there is the point.

type pool struct{}

func (pool) Submit(job func()) error { go job(); return nil }

func bridged(t *asyncio.T, ch chan int) (int, error) {
	// Negative: asyncio.Go's function runs on its own goroutine.
	if _, err := asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
		time.Sleep(time.Millisecond)
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return struct{}{}, exec.CommandContext(ctx, "true").Run()
	}); err != nil {
		return 0, err
	}
	// Negative: so does RunInExecutorOn's.
	f := asyncio.RunInExecutorOn(t, pool{}, func(ctx context.Context) (int, error) {
		return <-ch, nil
	})
	if _, err := f.Await(t); err != nil {
		return 0, err
	}
	// Negative: the loop's channel operations.
	if err := asyncio.Send(t, ch, 1); err != nil {
		return 0, err
	}
	v, _, err := asyncio.Recv(t, ch)
	return v, err
}

func generics(t *asyncio.T, tasks []*asyncio.Task[int], ch chan int) error {
	// Negative: the generic Wait and AsCompleted are awaits.
	if _, _, err := asyncio.Wait(t, tasks, time.Second, asyncio.AllCompleted); err != nil {
		return err
	}
	for tk, err := range asyncio.AsCompleted(t, tasks, 0) {
		if err != nil {
			return err
		}
		_ = tk
	}
	// Negative: an eager task's function is task code like any other and
	// is checked as such; this one does not block.
	eager := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, nil }, asyncio.WithEagerStart())
	if _, err := eager.Await(t); err != nil {
		return err
	}
	// Positive: an eager task's body blocks the loop like any task's.
	tk := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
		return <-ch, nil // want `channel receive inside a task blocks the whole event loop until a value arrives; use asyncio.Recv\(t, ch\)`
	}, asyncio.WithEagerStart())
	_, err := tk.Await(t)
	return err
}

// Positive: a generic task function blocks like any other.
func genericTask[V any](t *asyncio.T, ch chan V) (V, error) {
	time.Sleep(time.Millisecond) // want `time.Sleep inside a task blocks the whole event loop until it returns; use asyncio.Sleep\(t, d\)`
	return <-ch, nil             // want `channel receive inside a task`
}

// Positive: CreateTaskErr's function is a task.
func createTaskErr(t *asyncio.T, cmd *exec.Cmd) error {
	tk := asyncio.CreateTaskErr(t, func(t *asyncio.T) error {
		return cmd.Run() // want `exec.Cmd.Run inside a task .*exec.CommandContext`
	})
	_, err := tk.Await(t)
	return err
}
