package unawaitedtask

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func work(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, time.Millisecond) }

// Positive cases.

func discarded(t *asyncio.T) error {
	asyncio.CreateTask(t, work) // want `the task started by CreateTask is never awaited`
	return nil
}

func blank(t *asyncio.T) error {
	_ = asyncio.CreateTask(t, work) // want `the task started by CreateTask is never awaited`
	return nil
}

func blankVar(l *asyncio.Loop) {
	var _ = asyncio.CreateTask(l, work) // want `never awaited`
}

func droppedVariable(t *asyncio.T) error {
	tk := asyncio.CreateTask(t, work) // want `never awaited`
	_ = tk
	return nil
}

func overwrittenOnly(t *asyncio.T) error {
	var tk *asyncio.Task[int]
	tk = asyncio.CreateTask(t, work) // want `never awaited`
	_ = tk
	return nil
}

func literal(t *asyncio.T) error {
	asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { // want `never awaited`
		return "x", nil
	}, asyncio.WithName("fire and forget"))
	return nil
}

// Negative cases.

func awaited(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, work)
	return tk.Await(t)
}

func stored(t *asyncio.T) []*asyncio.Task[int] {
	var tasks []*asyncio.Task[int]
	for range 3 {
		tasks = append(tasks, asyncio.CreateTask(t, work))
	}
	return tasks
}

type holder struct{ tk *asyncio.Task[int] }

func field(t *asyncio.T, h *holder) {
	h.tk = asyncio.CreateTask(t, work)
}

func passed(t *asyncio.T) error {
	_, _, err := asyncio.Wait(t, []asyncio.Awaitable{asyncio.CreateTask(t, work)}, time.Second, asyncio.AllCompleted)
	return err
}

func grouped(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.Spawn(g, work) // the group awaits it
		return err
	})
}

func captured(t *asyncio.T) func() bool {
	tk := asyncio.CreateTask(t, work)
	return func() bool { return tk.Done() }
}

func cancelled(t *asyncio.T) {
	tk := asyncio.CreateTask(t, work)
	tk.Cancel() // a use: the caller chose to cancel it
}
