package foreigngoroutine

import (
	"context"

	"github.com/go-asyncio/asyncio"
)

type pool struct{}

func (pool) Submit(job func()) error { go job(); return nil }

// The functions given to asyncio.Go, ToThread, RunInExecutor and
// RunInExecutorOn run on another goroutine while the task awaits them.

// Positive cases.
func bridgeAwaits(t *asyncio.T) (int, error) {
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		return 0, asyncio.Sleep(t, 0) // want `asyncio.Sleep is called on t from a function that asyncio.Go runs on another goroutine`
	})
}

func bridgeCallSoon(t *asyncio.T) (int, error) {
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		t.Loop().CallSoon(func() {}) // want `asyncio.Loop.CallSoon is called on t from a function that asyncio.Go runs`
		return 0, nil
	})
}

func toThreadSets(t *asyncio.T, ev0 *asyncio.Event) (int, error) {
	ev := asyncio.NewEvent()
	return asyncio.ToThread(t, func(ctx context.Context) (int, error) {
		ev.Set() // want `asyncio.Event.Set is called on ev from a function that asyncio.ToThread runs on another goroutine`
		return 0, nil
	})
}

func executorPuts(t *asyncio.T) error {
	q := asyncio.NewQueue[int](1)
	f := asyncio.RunInExecutor(t, func(ctx context.Context) (int, error) {
		return 0, q.PutNowait(1) // want `asyncio.Queue.PutNowait is called on q from a function that asyncio.RunInExecutor runs`
	})
	_, err := f.Await(t)
	return err
}

func executorOnSetsResult(t *asyncio.T) error {
	fut := asyncio.NewFuture[int](t)
	f := asyncio.RunInExecutorOn(t, pool{}, func(ctx context.Context) (int, error) {
		return 0, fut.SetResult(1) // want `asyncio.Future.SetResult is called on fut from a function that asyncio.RunInExecutorOn runs`
	})
	_, err := f.Await(t)
	return err
}

// Negative cases.
func bridgeThreadsafe(t *asyncio.T) (int, error) {
	l := t.Loop()
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		_, err := l.CallSoonThreadsafe(func() {})
		return 0, err
	})
}

func bridgeWaitsForTask(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, nil })
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		cf := asyncio.Threadsafe[int](tk)
		if err := cf.Wait(ctx); err != nil {
			return 0, err
		}
		return cf.Result()
	})
}

func bridgeExpectsExternal(t *asyncio.T) (int, error) {
	l := t.Loop()
	release := l.ExpectExternal()
	go func() {
		defer release()
		_, _ = l.CallSoonThreadsafe(func() {})
	}()
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		rel := l.ExpectExternal()
		defer rel()
		return 0, nil
	})
}

func bridgeOwnLoop(t *asyncio.T) (int, error) {
	return asyncio.ToThread(t, func(ctx context.Context) (int, error) {
		loop := asyncio.NewLoop() // the goroutine's own loop
		tk := asyncio.CreateTask(loop, func(t *asyncio.T) (int, error) { return 1, nil })
		err := loop.RunUntilComplete(tk)
		_ = loop.Close()
		return 0, err
	})
}

func bridgeContextValue(t *asyncio.T, v *asyncio.ContextVar[string]) (string, error) {
	return asyncio.Go(t, func(ctx context.Context) (string, error) {
		return v.Value(ctx), nil
	})
}
