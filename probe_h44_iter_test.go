//go:build linux

package asyncio

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// Iterators closed at every moment: tasks suspended inside range loops
// over AsCompleted, AsCompletedBounded and Queue.Items, over
// AsCompletedFuncs and Wait, with a Timeout and a TaskGroup around them.
// Close (or the Runner's cancellation) unwinds each through its range
// loop: every deferred call runs, inside the loop body and around it, and
// no goroutine is left.
func TestH44_IteratorsClosedAtEveryMoment(t *testing.T) {
	h44CloseAtEach(t, 400, []LoopOption{WithVirtualTime()}, func(tk *T, r *h44Run) error {
		var started, deferred atomic.Int64
		track := func() func() {
			started.Add(1)
			return func() { deferred.Add(1) }
		}
		r.after(func(t *testing.T, _ bool) {
			if s, d := started.Load(), deferred.Load(); s != d {
				t.Errorf("%d bodies started, %d deferred calls ran", s, d)
			}
		})
		sleeper := func(d time.Duration, v int) func(*T) (int, error) {
			return func(tk *T) (int, error) {
				defer track()()
				return v, Sleep(tk, d)
			}
		}
		q := NewQueue[int](2)
		return TaskGroup(tk, func(g *Group) error {
			SpawnErr(g, func(tk *T) error { // AsCompleted
				defer track()()
				var aws []*Task[int]
				for i := range 4 {
					aws = append(aws, CreateTask(tk, sleeper(time.Duration(4-i)*time.Millisecond, i)))
				}
				n := 0
				for aw, err := range AsCompleted(tk, aws, time.Second) {
					if err != nil {
						return err
					}
					if _, err := aw.Await(tk); err != nil {
						return err
					}
					func() {
						defer track()()
						n++
					}()
					if err := Sleep(tk, time.Millisecond); err != nil {
						return err
					}
				}
				if n != 4 {
					return fmt.Errorf("AsCompleted: %d", n)
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error { // AsCompletedBounded
				defer track()()
				var fns []func(*T) (int, error)
				for i := range 5 {
					fns = append(fns, sleeper(time.Duration(i+1)*time.Millisecond, i))
				}
				n := 0
				for _, o := range AsCompletedBounded(tk, 2, fns...) {
					if o.Err != nil {
						return o.Err
					}
					n++
					if err := Sleep(tk, 0); err != nil {
						return err
					}
				}
				if n != 5 {
					return fmt.Errorf("AsCompletedBounded: %d", n)
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error { // Queue.Items, the consumer
				defer track()()
				n := 0
				for v, err := range q.Items(tk) {
					if err != nil {
						return err
					}
					if v != n {
						return fmt.Errorf("Items: %d, want %d", v, n)
					}
					n++
					q.TaskDone()
				}
				if n != 6 {
					return fmt.Errorf("Items: %d", n)
				}
				return nil
			})
			SpawnErr(g, func(tk *T) error { // the producer
				defer track()()
				for i := range 6 {
					if err := q.Put(tk, i); err != nil {
						return err
					}
					if err := Sleep(tk, time.Millisecond); err != nil {
						return err
					}
				}
				q.Shutdown(false)
				return nil
			})
			SpawnErr(g, func(tk *T) error { // AsCompletedFuncs under a Timeout
				defer track()()
				return Timeout(tk, time.Second, func(*TimeoutScope) error {
					defer track()()
					var aws []AwaitableOf[int]
					for i := range 3 {
						aws = append(aws, CreateTask(tk, sleeper(time.Duration(i+1)*time.Millisecond, i)))
					}
					for _, next := range AsCompletedFuncs(tk, aws, Never) {
						if _, err := next(tk); err != nil {
							return err
						}
					}
					return nil
				})
			})
			SpawnErr(g, func(tk *T) error { // Wait
				defer track()()
				var aws []*Task[int]
				for i := range 3 {
					aws = append(aws, CreateTask(tk, sleeper(time.Duration(i+2)*time.Millisecond, i)))
				}
				for len(aws) > 0 {
					_, pending, err := Wait(tk, aws, Never, FirstCompleted)
					if err != nil {
						return err
					}
					aws = pending
				}
				return nil
			})
			return nil
		})
	})
}
