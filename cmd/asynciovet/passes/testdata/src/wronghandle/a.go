package wronghandle

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

func get(t *asyncio.T, path string) (string, error) { return path, asyncio.Sleep(t, 0) }

// Positive cases.

func nested(t *asyncio.T, q *asyncio.Queue[int], fut *asyncio.Future[int]) error {
	a := asyncio.CreateTask(t, func(t2 *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Second) // want `Sleep awaits with t, the handle of an enclosing task, instead of this task's own t2: the await suspends the wrong task; use t2`
	})
	b := asyncio.CreateTask(t, func(inner *asyncio.T) (int, error) {
		return q.Get(t) // want `Queue.Get awaits with t, .* use inner`
	})
	c := asyncio.CreateTask(t, func(inner *asyncio.T) (int, error) {
		return 0, t.Await(a) // want `T.Await awaits with t, .* use inner`
	})
	d := asyncio.CreateTask(t, func(inner *asyncio.T) (string, error) {
		return get(t, "/x") // want `wronghandle.get awaits with t, .* use inner`
	})
	e := asyncio.CreateTask(t, func(inner *asyncio.T) (int, error) {
		return fut.Await(t) // want `Future.Await awaits with t, .* use inner`
	})
	for _, tk := range []*asyncio.Task[int]{a, b, c, e} {
		if _, err := tk.Await(t); err != nil {
			return err
		}
	}
	_, err := d.Await(t)
	return err
}

func unnamed(t *asyncio.T) *asyncio.Task[int] {
	return asyncio.CreateTask(t, func(*asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Second) // want `Sleep awaits with t, the handle of an enclosing task, inside a task function whose own \*asyncio.T parameter is unnamed`
	})
}

func viaVariable(t *asyncio.T) error {
	outer := t
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.Spawn(g, func(mine *asyncio.T) (int, error) {
			return 0, asyncio.TaskGroup(mine, func(g2 *asyncio.Group) error {
				return asyncio.Sleep(outer, 0) // want `Sleep awaits with outer, .* use mine`
			})
		})
		return err
	})
}

func gathered(t *asyncio.T) *asyncio.Future[[]int] {
	return asyncio.GatherFuncs(t,
		func(a *asyncio.T) (int, error) { return 1, asyncio.Sleep(a, 0) },
		func(b *asyncio.T) (int, error) { return 2, asyncio.Sleep(t, 0) }, // want `Sleep awaits with t, .* use b`
	)
}

// Negative cases.

func shadowed(t *asyncio.T) *asyncio.Task[int] {
	return asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Second) // its own t
	})
}

func sameTask(t *asyncio.T) (int, error) {
	// WaitForFunc runs fn inside t: both handles are the same task.
	v, err := asyncio.WaitForFunc(t, time.Second, func(inner *asyncio.T) (int, error) {
		return 1, asyncio.Sleep(t, 0)
	})
	if err != nil {
		return 0, err
	}
	// Called on the spot with t.
	if err := func(inner *asyncio.T) error { return asyncio.Sleep(t, 0) }(t); err != nil {
		return 0, err
	}
	// Bound to a variable that is called directly.
	step := func(inner *asyncio.T) error { return asyncio.Sleep(t, 0) }
	if err := step(t); err != nil {
		return 0, err
	}
	return v, nil
}

func notAnAwait(t *asyncio.T) *asyncio.Task[int] {
	return asyncio.CreateTask(t, func(inner *asyncio.T) (int, error) {
		t.Cancel("child gives up on the parent")                                        // cancelling another task is fine
		sub := asyncio.CreateTask(t, func(x *asyncio.T) (int, error) { return 0, nil }) // an owner, not an await
		return sub.Await(inner)
	})
}

type worker struct{ n int }

func (w *worker) run(t *asyncio.T) (int, error) { return w.n, asyncio.Sleep(t, 0) }

func methodValue(t *asyncio.T, w *worker) (int, error) {
	run := w.run
	tk := asyncio.CreateTask(t, run)
	return tk.Await(t)
}

func generic[V any](t *asyncio.T, v V) *asyncio.Task[V] {
	return asyncio.CreateTask(t, func(t *asyncio.T) (V, error) { return v, asyncio.Sleep(t, 0) })
}

func genericWrong[V any](t *asyncio.T, v V) *asyncio.Task[V] {
	return asyncio.CreateTask(t, func(own *asyncio.T) (V, error) { return v, asyncio.Sleep(t, 0) }) // want `Sleep awaits with t, .* use own`
}

func offLoop(t *asyncio.T) {
	go func() {
		_ = t.Name() // not an await: foreigngoroutine's business
	}()
}
