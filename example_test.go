package asyncio_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Run is asyncio.run: it runs main as a task on a new loop, then cancels
// and drains whatever is left and closes the loop.
func ExampleRun() {
	v, err := asyncio.Run(func(t *asyncio.T) (string, error) {
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return "", err
		}
		return "done", nil
	})
	fmt.Println(v, err)
	// Output: done <nil>
}

// Tasks start in creation order, one step at a time; Sleep(t, 0) is one
// bare yield that lets every other ready task take a step.
func ExampleCreateTask() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		worker := func(name string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				for i := range 2 {
					fmt.Println(name, "step", i)
					asyncio.Sleep(t, 0)
				}
				return len(name), nil
			}
		}
		a := asyncio.CreateTask(t, worker("a"))
		b := asyncio.CreateTask(t, worker("bb"))
		x, _ := a.Await(t)
		y, _ := b.Await(t)
		fmt.Println("sum", x+y)
		return struct{}{}, nil
	})
	// Output:
	// a step 0
	// bb step 0
	// a step 1
	// bb step 1
	// sum 3
}

// Cancelling a task delivers a CancelledError, carrying the message, at
// the await where the task is suspended; deferred calls run as the task
// unwinds.
func ExampleTask_Cancel() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		task := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			defer fmt.Println("cleanup")
			return 0, asyncio.Sleep(t, time.Hour)
		})
		asyncio.Sleep(t, 0) // let it start
		fmt.Println("cancel:", task.Cancel("enough"))
		_, err := task.Await(t)
		var ce *asyncio.CancelledError
		fmt.Println(errors.As(err, &ce), ce.Msg, task.Cancelled())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// cancel: true
	// cleanup
	// true enough true
}

// A future's done callbacks are scheduled with CallSoon, in registration
// order, never run inside SetResult.
func ExampleFuture() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	fut := asyncio.NewFuture[int](l)
	fut.AddDoneCallback(func() { v, _ := fut.Result(); fmt.Println("callback sees", v) })
	l.CallSoon(func() {
		fut.SetResult(42)
		fmt.Println("SetResult returned")
	})
	l.RunUntilComplete(fut)
	// Output:
	// SetResult returned
	// callback sees 42
}

// On virtual time a day of sleeping takes no real time at all.
func ExampleNewTestLoop() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (time.Duration, error) {
		err := asyncio.Sleep(t, 24*time.Hour)
		return t.Loop().Time(), err
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	// Output: 24h0m0s <nil>
}

// A test of a 30-second timeout runs in microseconds on virtual time: the
// loop jumps straight to the deadline, where the timeout cancels the
// sleeping body and turns the cancellation into a TimeoutError.
func ExampleNewTestLoop_timeout() {
	l := asyncio.NewTestLoop()
	defer l.Close()
	realStart := time.Now()
	task := asyncio.CreateTask(l, func(t *asyncio.T) (string, error) {
		err := asyncio.Timeout(t, 30*time.Second, func(s *asyncio.TimeoutScope) error {
			return asyncio.Sleep(t, time.Minute) // too slow
		})
		return fmt.Sprintf("at %v: timeout=%v cancelled=%v", t.Loop().Time(),
			errors.Is(err, asyncio.ErrTimeout), asyncio.IsCancelled(err)), nil
	})
	l.RunUntilComplete(task)
	fmt.Println(task.Result())
	fmt.Println("real time under a second:", time.Since(realStart) < time.Second)
	// Output:
	// at 30s: timeout=true cancelled=false <nil>
	// real time under a second: true
}
