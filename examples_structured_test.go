package asyncio_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
)

// TaskGroup is "async with asyncio.TaskGroup() as g": the first child
// failure cancels its siblings and the body, and TaskGroup returns every
// failure in an *ExceptionGroup once all children are done.
func ExampleTaskGroup() {
	errDisk := errors.New("disk full")
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			asyncio.Spawn(g, func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, time.Hour); err != nil {
					fmt.Println("slow child:", err)
					return 0, err
				}
				return 1, nil
			})
			asyncio.Spawn(g, func(t *asyncio.T) (int, error) {
				asyncio.Sleep(t, time.Second)
				return 0, errDisk
			})
			return asyncio.Sleep(t, time.Hour) // the body is cancelled too
		})
		var eg *asyncio.ExceptionGroup
		fmt.Println(errors.As(err, &eg), errors.Is(err, errDisk), len(eg.Errs))
		fmt.Println(err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// slow child: asyncio: cancelled
	// true true 1
	// unhandled errors in a TaskGroup (1 sub-exception): disk full
}

// Timeout is "async with asyncio.timeout(d)": the deadline cancels the task,
// and the scope turns that cancellation into a *TimeoutError.
func ExampleTimeout() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		err := asyncio.Timeout(t, time.Second, func(s *asyncio.TimeoutScope) error {
			fmt.Println(s)
			return asyncio.Sleep(t, time.Hour)
		})
		fmt.Println(t.Loop().Time(), err, errors.Is(err, asyncio.ErrTimeout), asyncio.IsCancelled(err))
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// <Timeout [active] when=1.0>
	// 1s asyncio: timeout true false
}

// WaitFor is asyncio.wait_for: await with a timeout; on expiry the awaited
// task is cancelled and awaited before the *TimeoutError is returned.
func ExampleWaitFor() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		fast := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "fast", asyncio.Sleep(t, time.Second)
		})
		slow := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "slow", asyncio.Sleep(t, time.Hour)
		})
		fmt.Println(asyncio.WaitFor(t, 2*time.Second, fast))
		_, err := asyncio.WaitFor(t, 2*time.Second, slow)
		fmt.Println(err, slow.Cancelled())
		v, err := asyncio.WaitForFunc(t, time.Second, func(t *asyncio.T) (int, error) {
			return 42, nil // runs inside the calling task
		})
		fmt.Println(v, err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// fast <nil>
	// asyncio: timeout true
	// 42 <nil>
}

// Gather is asyncio.gather: results in argument order, whatever the
// completion order; GatherOutcomes is return_exceptions=True.
func ExampleGather() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		after := func(d time.Duration, v int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) { return v, asyncio.Sleep(t, d) }
		}
		vs, err := asyncio.GatherFuncs(t, after(3*time.Second, 1), after(time.Second, 2), after(2*time.Second, 3)).Await(t)
		fmt.Println(vs, err)

		bad := asyncio.CreateTask(t, func(*asyncio.T) (int, error) { return 0, errors.New("bad") })
		good := asyncio.CreateTask(t, after(0, 7))
		outs, _ := asyncio.GatherOutcomes[int](t, bad, good).Await(t)
		fmt.Println(outs)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// [1 2 3] <nil>
	// [{0 bad} {7 <nil>}]
}

// Shield is asyncio.shield: cancelling the waiter does not cancel the
// shielded task.
func ExampleShield() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		save := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
			return "saved", asyncio.Sleep(t, 2*time.Second)
		})
		_, err := asyncio.WaitFor(t, time.Second, asyncio.Shield[string](save))
		fmt.Println(err)
		fmt.Println(save.Await(t))
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// asyncio: timeout
	// saved <nil>
}

// Wait is asyncio.wait: it splits the awaitables into done and pending,
// and never cancels anything.
func ExampleWait() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		a := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, time.Second) })
		b := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 2, asyncio.Sleep(t, time.Hour) })
		done, pending, err := asyncio.Wait(t, []asyncio.Awaitable{a, b}, asyncio.Never, asyncio.FirstCompleted)
		fmt.Println(len(done), len(pending), done[0] == asyncio.Awaitable(a), err)
		b.Cancel()
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output: 1 1 true <nil>
}

// AsCompleted is "async for f in asyncio.as_completed(aws, timeout=...)":
// the awaitables in completion order, then a *TimeoutError if the timeout
// passes first.
func ExampleAsCompleted() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		after := func(d time.Duration, v string) *asyncio.Task[string] {
			return asyncio.CreateTask(t, func(t *asyncio.T) (string, error) { return v, asyncio.Sleep(t, d) })
		}
		aws := []asyncio.AwaitableOf[string]{after(3*time.Second, "c"), after(time.Second, "a"), after(time.Hour, "never")}
		for aw, err := range asyncio.AsCompletedOf(t, aws, 5*time.Second) {
			if err != nil {
				fmt.Println(t.Loop().Time(), err)
				break
			}
			v, _ := aw.Result()
			fmt.Println(t.Loop().Time(), v)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// 1s a
	// 3s c
	// 5s asyncio: timeout
}
