// Package generics checks that generic code, method values and closures
// passed through variables neither crash the analyzers nor confuse them.
package generics

import (
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
)

type Pool[V any] struct {
	ch chan V
	mu sync.Mutex
}

func (p *Pool[V]) Take(t *asyncio.T) (V, error) {
	p.mu.Lock() // want `blockingcall: sync.Mutex.Lock inside a task`
	defer p.mu.Unlock()
	return <-p.ch, nil // want `blockingcall: channel receive inside a task`
}

// A channel of a type-parameter type: its core type is not resolved, stay
// silent.
func RecvAny[C ~chan V, V any](t *asyncio.T, c C) V { return <-c }

func Spawn[V any](t *asyncio.T, fn func(*asyncio.T) (V, error)) (V, error) {
	tk := asyncio.CreateTask(t, fn)
	return tk.Await(t)
}

func DropGeneric[V any](t *asyncio.T, q *asyncio.Queue[V]) V {
	v, _ := q.Get(t) // want `droppedcancel: the error of asyncio.Queue.Get is assigned to _`
	return v
}

func ExplicitInstance(t *asyncio.T, q *asyncio.Queue[string]) error {
	_, err := asyncio.WaitFor[string](t, time.Second, nil)
	if err != nil {
		return err
	}
	tk := asyncio.CreateTask[int](t, func(own *asyncio.T) (int, error) {
		return 0, asyncio.Sleep(t, 0) // want `wronghandle: asyncio.Sleep awaits with t, .* use own`
	})
	_, err = tk.Await(t)
	return err
}

type svc struct{ n int }

func (s *svc) run(t *asyncio.T) (int, error) {
	time.Sleep(time.Millisecond) // want `blockingcall: time.Sleep inside a task`
	return s.n, nil
}

func MethodValues(t *asyncio.T, s *svc) (int, error) {
	f := s.run
	g := (*svc).run
	tk := asyncio.CreateTask(t, f)
	if _, err := g(s, t); err != nil {
		return 0, err
	}
	return tk.Await(t)
}

// Calls through function values are not resolved statically: silent.
func ThroughVariables(t *asyncio.T) error {
	sleep := asyncio.Sleep
	sleep(t, 0)
	block := time.Sleep
	block(time.Millisecond)
	// A TaskGroup body passed through a variable is not recognised as one
	// (a documented miss): silent.
	body := func(g *asyncio.Group) error {
		time.Sleep(time.Second)
		return nil
	}
	return asyncio.TaskGroup(t, body)
}

// Instantiated generic task functions.
func Instantiated(t *asyncio.T) (int, error) {
	return Spawn[int](t, func(t *asyncio.T) (int, error) { return 1, nil })
}
