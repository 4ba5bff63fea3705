// Package h48_generics: generic helpers that take the task's handle, type
// parameters instantiated with task results.
package h48_generics

import (
	"log"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A generic await helper of the program.
func awaitAll[V any](t *asyncio.T, tasks []*asyncio.Task[V]) ([]V, error) {
	out := make([]V, 0, len(tasks))
	for _, tk := range tasks {
		v, err := tk.Await(t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// A generic helper that drops the error of an await.
func getOrZero[V any](t *asyncio.T, q *asyncio.Queue[V]) V {
	v, _ := q.Get(t) // want `droppedcancel: the error of asyncio\.Queue\.Get is`
	return v
}

// A generic helper that blocks.
func loadAs[V any](path string, conv func([]byte) V) V { // want loadAs:`blocks: calls os\.ReadFile`
	b, _ := os.ReadFile(path)
	return conv(b)
}

type result[V any] struct {
	v   V
	err error
}

// Generic task starter: the task is returned to the caller (kept).
func start[V any](t *asyncio.T, fn func(*asyncio.T) (V, error)) *asyncio.Task[V] {
	return asyncio.CreateTask(t, fn)
}

func fanOut(t *asyncio.T, urls []string) ([]int, error) {
	var tasks []*asyncio.Task[int]
	for _, u := range urls {
		u := u
		tasks = append(tasks, asyncio.CreateTask(t, func(c *asyncio.T) (int, error) {
			if err := asyncio.Sleep(c, time.Millisecond); err != nil {
				return 0, err
			}
			return len(u), nil
		}))
	}
	return awaitAll(t, tasks)
}

func generic2(t *asyncio.T) (result[int], error) {
	n := loadAs(os.Args[0], func(b []byte) int { return len(b) }) // want `blockingcall: h48_generics\.loadAs inside a task blocks`
	tk := start(t, func(c *asyncio.T) (int, error) { return n, nil })
	v, err := tk.Await(t)
	return result[int]{v, err}, nil
}

// A generic coroutine that awaits with the outer handle in a task literal.
func wrapped[V any](t *asyncio.T, q *asyncio.Queue[V]) (*asyncio.Task[V], error) {
	tk := asyncio.CreateTask(t, func(c *asyncio.T) (V, error) {
		return q.Get(t) // want `wronghandle: asyncio\.Queue\.Get awaits with t, the`
	})
	return tk, nil
}

// A generic type whose method takes the task.
type Pipe[V any] struct{ q *asyncio.Queue[V] }

func (p *Pipe[V]) Push(t *asyncio.T, v V) error { return p.q.Put(t, v) }

func (p *Pipe[V]) Loop(t *asyncio.T, vs []V) {
	for _, v := range vs {
		if err := p.q.Put(t, v); err != nil { // want `droppedcancel: the error of asyncio\.Queue\.Put is`
			log.Print(err)
		}
	}
}

// A method of the program is not an await (documented).
func usePipe(t *asyncio.T, p *Pipe[string]) error {
	p.Push(t, "x")
	_ = p.Push(t, "y")
	return nil
}

// Gather of tasks collected in a slice.
func gathered(t *asyncio.T) ([]int, error) {
	var aws []asyncio.AwaitableOf[int]
	for i := 0; i < 3; i++ {
		aws = append(aws, asyncio.CreateTask(t, func(c *asyncio.T) (int, error) { return i, nil }))
	}
	return asyncio.Gather(t, aws...).Await(t)
}

// Awaits on type parameters constrained by the library's interfaces.
func awaitParam[A asyncio.AwaitableOf[int]](t *asyncio.T, a A) int {
	a.Await(t)         // want `droppedcancel: the error of asyncio\.AwaitableOf\.Await is`
	v, _ := a.Await(t) // want `droppedcancel: the error of asyncio\.AwaitableOf\.Await is`
	return v
}

func awaitTask[V any](t *asyncio.T, tk *asyncio.Task[V]) {
	tk.Await(t) // want `droppedcancel: the error of asyncio\.Task\.Await is`
}

func lockParam[L asyncio.Locker](t *asyncio.T, lk L) error {
	lk.Acquire(t) // want `droppedcancel: the error of asyncio\.Locker\.Acquire is`
	return lk.Release()
}

// Wait over a slice of a type parameter.
func waitParam[A asyncio.Awaitable](t *asyncio.T, aws []A) []A {
	done, _, _ := asyncio.Wait(t, aws, asyncio.Never, asyncio.AllCompleted) // want `droppedcancel: the error of asyncio\.Wait is`
	return done
}

// A generic task function instantiated by name.
func produce[V any](t *asyncio.T) (V, error) {
	var v V
	return v, asyncio.Sleep(t, time.Millisecond)
}

func instantiate(t *asyncio.T) {
	asyncio.CreateTask(t, produce[int])          // want `unawaitedtask: the task started by CreateTask`
	tk := asyncio.CreateTask(t, produce[string]) // want `unawaitedtask: the task started by CreateTask`
	_ = tk
}
