// Package h48_handles: wronghandle through nested closures, shadowed
// variables and handles captured by goroutines.
package h48_handles

import (
	"time"

	"github.com/go-asyncio/asyncio"
)

// Three levels: the innermost task awaits with the middle task's handle.
func nested(t *asyncio.T) (int, error) {
	outer := asyncio.CreateTask(t, func(mid *asyncio.T) (int, error) {
		inner := asyncio.CreateTask(mid, func(in *asyncio.T) (int, error) {
			return 0, asyncio.Sleep(mid, time.Millisecond) // want `wronghandle: asyncio\.Sleep awaits with mid, the`
		})
		return inner.Await(mid)
	})
	return outer.Await(t)
}

// A closure without a handle of its own inside a task literal: the
// closure runs in the task, its t is the outer one.
func closureInTask(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
		nap := func() error { return asyncio.Sleep(t, time.Millisecond) } // want `wronghandle: asyncio\.Sleep awaits with t, the`
		return 0, nap()
	})
	return tk.Await(t)
}

// The task literal shadows the outer name: t inside is its own.
func shadowing(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Millisecond)
	})
	return tk.Await(t)
}

// A copy of the outer handle under another name.
func aliasHandle(t *asyncio.T) (int, error) {
	parent := t
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(parent, time.Millisecond) // want `wronghandle: asyncio\.Sleep awaits with parent, the`
	})
	return tk.Await(t)
}

// A copy made inside the literal from the outer handle: h is the
// literal's own variable, not followed (a documented limitation).
func aliasInside(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
		h := t
		return 0, asyncio.Sleep(h, time.Millisecond)
	})
	return tk.Await(t)
}

// The handle's Await method with the outer handle.
func awaitMethod(t *asyncio.T, ev *asyncio.Event) (int, error) {
	fut := asyncio.NewFuture[int](t)
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
		return 0, t.Await(fut) // want `wronghandle: T\.Await awaits with t, the`
	})
	return tk.Await(t)
}

// A helper closure stored in a map, called by the task with its own
// handle: the same task at run time, but only literals called directly,
// or given to WaitForFunc or Retry, are exempt (the map might as well be
// read by another task); awaiting with s is right either way.
func storedAndCalled(t *asyncio.T) error {
	steps := map[string]func(*asyncio.T) error{
		"nap": func(s *asyncio.T) error { return asyncio.Sleep(t, time.Millisecond) }, // want `wronghandle: asyncio\.Sleep awaits with t, the`
	}
	return steps["nap"](t)
}

// GatherFuncs runs each function as a task of its own.
func gatherFuncs(t *asyncio.T) ([]int, error) {
	return asyncio.GatherFuncs(t,
		func(a *asyncio.T) (int, error) { return 0, asyncio.Sleep(t, time.Millisecond) }, // want `wronghandle: asyncio\.Sleep awaits with t, the`
		func(b *asyncio.T) (int, error) { return 0, asyncio.Sleep(b, time.Millisecond) },
	).Await(t)
}

// A task literal whose handle is unnamed.
func unnamed(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(*asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Millisecond) // want `wronghandle: asyncio\.Sleep awaits with t, the`
	})
	return tk.Await(t)
}

// A task literal that hands the outer handle to a coroutine of the program.
func step(t *asyncio.T) error { return asyncio.Sleep(t, time.Millisecond) }

func viaCoroutine(t *asyncio.T) (int, error) {
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
		return 0, step(t) // want `wronghandle: h48_handles\.step awaits with t, the`
	})
	return tk.Await(t)
}

// The task's handle awaited from a TaskGroup body (same task): fine.
func groupBody(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		return asyncio.Sleep(t, time.Millisecond)
	})
}

// A spawned task inside a TaskGroup awaiting with the outer handle.
func spawnWrong(t *asyncio.T) error {
	return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		_, err := asyncio.Spawn(g, func(c *asyncio.T) (int, error) {
			return 0, asyncio.Sleep(t, time.Millisecond) // want `wronghandle: asyncio\.Sleep awaits with t, the`
		})
		return err
	})
}

// WaitForFunc runs its function inside the calling task.
func waitForFunc(t *asyncio.T) (int, error) {
	return asyncio.WaitForFunc(t, time.Second, func(c *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Millisecond)
	})
}

// A generic helper of the program that runs its function in the calling
// task: the literal's own handle is the caller's, but only the library's
// WaitForFunc and Retry are known to do that; awaiting with c is right
// either way.
func inline[V any](t *asyncio.T, fn func(*asyncio.T) (V, error)) (V, error) { return fn(t) }

func viaInline(t *asyncio.T) (int, error) {
	return inline(t, func(c *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, time.Millisecond) // want `wronghandle: asyncio\.Sleep awaits with t, the`
	})
}
