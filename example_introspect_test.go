package asyncio_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A snapshot of every task of a loop: who awaits whom, what each one waits
// on and for how long (exact on virtual time), as asyncio's pstree and ps
// show them. With WithTaskStacks (or debug mode) each task also shows the
// Go lines it waits on.
func ExampleSnapshot() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		t.SetName("main")
		lock := asyncio.NewLock()
		if err := lock.Acquire(t); err != nil {
			return struct{}{}, err
		}
		worker := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			return 0, lock.Acquire(t)
		}, asyncio.WithName("worker"))
		waiter := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			return worker.Await(t)
		}, asyncio.WithName("waiter"))
		if err := asyncio.Sleep(t, 1500*time.Millisecond); err != nil {
			return struct{}{}, err
		}
		waiter.Cancel("enough")
		s := asyncio.Snapshot(t, asyncio.SnapshotOptions{})
		_ = s.WriteTree(os.Stdout)
		for _, ti := range s.Tasks {
			fmt.Printf("%s: %s %s, cancel requests %d\n", ti.Name, ti.State, ti.Awaits, len(ti.CancelRequests))
		}
		worker.Cancel()
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// └── (T) main [running]
	// └── (T) waiter [waiting 1.5s on task 'worker'; cancelling 1]
	//     └── (T) worker [ready; cancelling 1]
	// note: 3 tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator
	// main: running , cancel requests 0
	// worker: ready , cancel requests 1
	// waiter: waiting task 'worker', cancel requests 1
}

// On virtual time, a loop that would wait forever stops with an error that
// matches ErrDeadlock and shows what every task was waiting on.
func ExampleDeadlockError() {
	_, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		t.SetName("main")
		q := asyncio.NewQueue[int](0)
		consumer := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			return q.Get(t) // nobody ever puts anything
		}, asyncio.WithName("consumer"))
		return consumer.Await(t)
	}, asyncio.WithVirtualTime())
	fmt.Println(errors.Is(err, asyncio.ErrDeadlock))
	fmt.Println(err)
	// Output:
	// true
	// asyncio: deadlock: the loop would block forever; the tasks and what they wait on:
	// └── (T) main [waiting 0s on task 'consumer']
	//     └── (T) consumer [waiting 0s on Queue.Get]
	// note: 2 tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator
}

// The await graph of a task (asyncio.capture_call_graph): here a task
// awaited through a gather by main.
func ExampleCaptureCallGraph() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		t.SetName("main")
		leaf := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			return 1, asyncio.Sleep(t, time.Second)
		}, asyncio.WithName("leaf"))
		gather := asyncio.Gather[int](t, leaf)
		printer := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
			g := asyncio.CaptureCallGraph(leaf)
			for n := g; n != nil; {
				fmt.Println(n.Future)
				if len(n.AwaitedBy) == 0 {
					break
				}
				n = &n.AwaitedBy[0]
			}
			return 0, nil
		})
		if _, err := gather.Await(t); err != nil {
			return struct{}{}, err
		}
		_, err := printer.Await(t)
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	// Output:
	// <Task pending name='leaf'>
	// <Task pending name='main'>
}

// Hooks before and after every poll (Redis ae.c's beforesleep and
// aftersleep), e.g. to flush what the callbacks of one iteration buffered.
func ExampleLoop_SetBeforePoll() {
	loop := asyncio.NewTestLoop()
	var buffered []string
	loop.SetBeforePoll(func() {
		if len(buffered) > 0 {
			fmt.Println("flush", buffered)
			buffered = nil
		}
	})
	for i := range 3 {
		loop.CallSoon(func() { buffered = append(buffered, fmt.Sprint("write ", i)) })
	}
	loop.CallLater(time.Second, func() { buffered = append(buffered, "late write") })
	// On virtual time the loop runs until nothing is left to do.
	err := loop.RunForever()
	s := loop.Stats()
	fmt.Println(errors.Is(err, asyncio.ErrDeadlock), "iterations", s.Iterations, "callbacks", s.Callbacks, "waited", s.PollTime)
	_ = loop.Close()
	// Output:
	// flush [write 0 write 1 write 2]
	// flush [late write]
	// true iterations 3 callbacks 4 waited 1s
}
