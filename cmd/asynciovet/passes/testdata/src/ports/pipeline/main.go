// Command pipeline is a port of the asyncio queue example
// (docs.python.org, "asyncio.Queue: distribute workload between several
// tasks") grown into a three-stage pipeline with a bounded number of
// workers, an Event for shutdown and a worker that survives one
// cancellation on purpose. It must produce no finding.
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

type job struct {
	id    int
	sleep time.Duration
}

func producer(t *asyncio.T, q *asyncio.Queue[job], n int) error {
	for i := range n {
		if err := q.Put(t, job{id: i, sleep: time.Duration(rand.IntN(100)) * time.Millisecond}); err != nil {
			return err
		}
	}
	return nil
}

// worker is asyncio's worker(name, queue): it sleeps for each job.
func worker(name string, in *asyncio.Queue[job], out *asyncio.Queue[string], sem *asyncio.Semaphore) func(*asyncio.T) (int, error) {
	return func(t *asyncio.T) (int, error) {
		done := 0
		for {
			j, err := in.Get(t)
			if err != nil {
				return done, err
			}
			if err := sem.Acquire(t); err != nil {
				return done, err
			}
			err = asyncio.Sleep(t, j.sleep)
			sem.Release()
			if err != nil {
				return done, err
			}
			// The checksum is CPU work: run it off the loop.
			sum, err := asyncio.Go(t, func(ctx context.Context) (int, error) {
				return checksum(ctx, j.id), nil
			})
			if err != nil {
				return done, err
			}
			if err := out.Put(t, fmt.Sprintf("%s: job %d sum %d", name, j.id, sum)); err != nil {
				return done, err
			}
			if err := in.TaskDone(); err != nil {
				return done, err
			}
			done++
		}
	}
}

func checksum(ctx context.Context, n int) int {
	s := 0
	for i := range n * 1000 {
		if ctx.Err() != nil {
			return s
		}
		s += i % 7
	}
	return s
}

// stubborn finishes its current job even when cancelled once, then
// re-raises: asyncio's "except CancelledError: cleanup(); raise".
func stubborn(t *asyncio.T, stop *asyncio.Event) (string, error) {
	err := stop.Wait(t)
	if asyncio.IsCancelled(err) {
		t.Uncancel()
		if err := asyncio.Sleep(t, 10*time.Millisecond); err != nil {
			return "", err
		}
		return "cleaned up", nil
	}
	return "stopped", err
}

func run(t *asyncio.T) (int, error) {
	in := asyncio.NewQueue[job](10)
	out := asyncio.NewQueue[string](0)
	sem := asyncio.NewSemaphore(2)
	stop := asyncio.NewEvent()
	total := 0
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		var workers []*asyncio.Task[int]
		for i := range 3 {
			w, err := asyncio.Spawn(g, worker(fmt.Sprintf("worker-%d", i), in, out, sem))
			if err != nil {
				return err
			}
			workers = append(workers, w)
		}
		keeper, err := asyncio.Spawn(g, func(t *asyncio.T) (string, error) { return stubborn(t, stop) })
		if err != nil {
			return err
		}
		if err := producer(t, in, 20); err != nil {
			return err
		}
		if err := in.Join(t); err != nil {
			return err
		}
		for _, w := range workers {
			w.Cancel()
		}
		stop.Set()
		for out.Len() > 0 {
			line, err := out.Get(t)
			if err != nil {
				return err
			}
			fmt.Println(line)
			total++
		}
		_ = keeper
		return nil
	})
	return total, err
}

func main() {
	n, err := asyncio.Run(run)
	if err != nil && !asyncio.IsCancelled(err) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(n, "results")
}
