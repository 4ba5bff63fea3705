package main

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-asyncio/asyncio"
)

// busyGroupEnv, set to 1, makes the interpreter run its scenario on loop 0
// of a busy LoopGroup instead of a loop of its own (run.sh's "busy group"
// runs; issue 18 item 7): the trace must still be CPython's.
const busyGroupEnv = "ASYNCIO_SCENARIO_BUSY_GROUP"

// runFileOnBusyGroup runs the scenario at path on loop 0 of a 3-loop group
// on virtual time while loops 1 and 2 hand items back and forth.
func runFileOnBusyGroup(path string) error {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(3), asyncio.WithGroupLoopOptions(asyncio.WithVirtualTime()))
	q12, q21 := asyncio.NewCrossQueue[int](4), asyncio.NewCrossQueue[int](4)
	stop := make(chan struct{})
	var busy sync.WaitGroup
	rounds := make([]int, 3)
	for i := 1; i <= 2; i++ {
		l := g.Loop(i)
		busy.Add(1)
		go func() {
			defer busy.Done()
			task := asyncio.CreateTask(l, func(t *asyncio.T) (struct{}, error) {
				in, out := q21, q12
				if i == 2 {
					in, out = q12, q21
				}
				if i == 1 {
					_ = out.PutNowait(0)
				}
				for {
					if i == 1 {
						select {
						case <-stop:
							out.Shutdown(false)
						default:
						}
					}
					v, err := in.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						out.Shutdown(false)
						return struct{}{}, nil
					}
					if err != nil {
						return struct{}{}, err
					}
					rounds[i]++
					if err := asyncio.Sleep(t, 0); err != nil {
						return struct{}{}, err
					}
					if err := out.Put(t, v+1); err != nil && !errors.Is(err, asyncio.ErrQueueShutDown) {
						return struct{}{}, err
					}
				}
			})
			_ = l.RunUntilComplete(task)
		}()
	}
	newScenarioLoop = func() *asyncio.Loop { return g.Loop(0) }
	err := runFile(path, os.Stdout)
	close(stop)
	busy.Wait()
	if rounds[1] == 0 || rounds[2] == 0 {
		err = errors.Join(err, fmt.Errorf("the other loops were not busy: %v rounds", rounds))
	}
	return errors.Join(err, g.Close())
}
