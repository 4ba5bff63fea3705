package asyncio_test

import (
	"fmt"

	"github.com/go-asyncio/asyncio"
)

// A group of loops, one main per loop: each loop sums its share, and
// loop 0 asks loop 1 for a value with a cross-loop call.
func ExampleRunEach() {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	sums, err := asyncio.RunEach(g, func(t *asyncio.T, i int) (int, error) {
		sum := 0
		for k := i; k < 10; k += 2 {
			sum += k
		}
		if i == 0 {
			v, err := asyncio.CallOn(t, g.Loop(1), func(rt *asyncio.T) (int, error) {
				return 100 * (g.Index(rt.Loop()) + 1), nil // runs as a task on loop 1
			})
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	})
	fmt.Println(sums, err)
	// Output: [220 25] <nil>
}

// One main for the group (RunGroup): the other loops serve what it hands
// them. Spread runs a fan-out over every loop; a CrossQueue carries a
// pipeline from loop 1 back to loop 0 with backpressure.
func ExampleRunGroup() {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	v, err := asyncio.RunGroup(g, func(t *asyncio.T) (string, error) {
		loops, err := asyncio.Spread(t, g, 4, func(rt *asyncio.T, i int) (int, error) {
			return g.Index(rt.Loop()), nil
		})
		if err != nil {
			return "", err
		}
		q := asyncio.NewCrossQueue[string](1)
		_, err = asyncio.SubmitTo(t, g.Loop(1), func(rt *asyncio.T) (struct{}, error) {
			for _, w := range []string{"a", "b", "c"} {
				if err := q.Put(rt, w); err != nil { // waits while the queue is full
					return struct{}{}, err
				}
			}
			q.Shutdown(false)
			return struct{}{}, nil
		})
		if err != nil {
			return "", err
		}
		got := ""
		for {
			w, err := q.Get(t)
			if err != nil {
				break // asyncio.ErrQueueShutDown: all read
			}
			got += w
		}
		return fmt.Sprint(loops, " ", got), nil
	})
	fmt.Println(v, err)
	// Output: [0 1 0 1] abc <nil>
}

// CrossQueue.Join across loops: jobs put on loop 0, worked on loop 1,
// each marked done with TaskDone; Join on loop 0 returns once every job
// is done (asyncio's queue.join()).
func ExampleCrossQueue_Join() {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(2))
	defer g.Close()
	sum, err := asyncio.RunGroup(g, func(t *asyncio.T) (int, error) {
		q := asyncio.NewCrossQueue[int](2)
		total := 0 // the worker's, on loop 1; read once it ended
		worker, err := asyncio.SubmitTo(t, g.Loop(1), func(rt *asyncio.T) (struct{}, error) {
			for {
				v, err := q.Get(rt)
				if err != nil {
					return struct{}{}, nil // asyncio.ErrQueueShutDown: no more jobs
				}
				total += v
				if err := q.TaskDone(); err != nil {
					return struct{}{}, err
				}
			}
		})
		if err != nil {
			return 0, err
		}
		for v := 1; v <= 10; v++ {
			if err := q.Put(t, v); err != nil {
				return 0, err
			}
		}
		if err := q.Join(t); err != nil { // every job done
			return 0, err
		}
		q.Shutdown(false)
		if _, err := worker.Await(t); err != nil {
			return 0, err
		}
		return total, nil
	})
	fmt.Println(sum, err)
	// Output: 55 <nil>
}
