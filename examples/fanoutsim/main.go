// Command fanoutsim is the shape of a fan-out client, with simulated latency
// (each "request" sleeps for a latency drawn from a fixed table):
//
//  1. many requests at once, at most -limit in flight (a Semaphore), all in
//     one TaskGroup;
//  2. a per-request timeout: slow requests fail with a TimeoutError and the
//     others still complete;
//  3. "first success, cancel the rest": the same request sent to several
//     replicas; the first answer wins and the losers are cancelled.
//
// Each behaviour is printed. -virtual runs it on the loop's virtual clock.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
)

var out io.Writer = os.Stdout

// latency is the simulated service time of request i: 10.5 to 99.5 ms
// (the half millisecond keeps it off any whole-millisecond timeout).
func latency(i int) time.Duration {
	return time.Duration(10+(i*37)%90)*time.Millisecond + 500*time.Microsecond
}

// request simulates one request: it takes latency(i) and returns i*i.
func request(t *asyncio.T, i int) (int, error) {
	if err := asyncio.Sleep(t, latency(i)); err != nil {
		return 0, err
	}
	return i * i, nil
}

// fanOut sends n requests, at most limit at a time (sem holds limit
// units), each under timeout.
func fanOut(t *asyncio.T, sem *asyncio.Semaphore, n, limit int, timeout time.Duration) error {
	inFlight, maxInFlight, ok, timedOut, sum := 0, 0, 0, 0, 0
	start := t.Loop().Time()
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := range n {
			_, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
				if err := sem.Acquire(t); err != nil {
					return struct{}{}, err
				}
				defer sem.Release()
				inFlight++
				maxInFlight = max(maxInFlight, inFlight)
				defer func() { inFlight-- }()
				v, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (int, error) { return request(t, i) })
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					timedOut++ // a slow request fails alone; the group goes on
					return struct{}{}, nil
				case err != nil:
					return struct{}{}, err
				}
				ok++
				sum += v
				return struct{}{}, nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "fan-out: %d requests, limit %d (max in flight %d), timeout %v: %d ok, %d timed out, sum %d, took %v\n",
		n, limit, maxInFlight, timeout, ok, timedOut, sum, (t.Loop().Time() - start).Round(time.Millisecond))
	return nil
}

// firstSuccess sends request i to every replica (replica r adds r*40ms of
// latency and replica 0 is down) and returns the first success, cancelling
// the others.
func firstSuccess(t *asyncio.T, i, replicas int) error {
	winner := asyncio.NewFuture[string](t)
	var cancelled []string
	start := t.Loop().Time()
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for r := range replicas {
			name := fmt.Sprintf("replica-%d", r)
			_, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
				err := asyncio.Sleep(t, latency(i)+time.Duration(r)*40*time.Millisecond)
				if asyncio.IsCancelled(err) {
					cancelled = append(cancelled, name)
					return struct{}{}, err
				}
				if r == 0 {
					return struct{}{}, nil // down: no answer, not an error for the race
				}
				if !winner.Done() {
					winner.SetResult(name)
					g.Cancel() // first success: end the group, cancelling the losers
				}
				return struct{}{}, nil
			}, asyncio.WithName(name))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w, err := winner.Result()
	fmt.Fprintf(out, "first success of %d replicas: %s won after %v; cancelled: %v\n",
		replicas, w, t.Loop().Time()-start, cancelled)
	return err
}

func run(n, limit int, timeout time.Duration, opts ...asyncio.LoopOption) error {
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		if err := fanOut(t, asyncio.NewSemaphore(limit), n, limit, timeout); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, firstSuccess(t, 3, 4)
	}, opts...)
	return err
}

func main() {
	n := flag.Int("n", 200, "number of requests")
	limit := flag.Int("limit", 20, "maximum requests in flight")
	timeout := flag.Duration("timeout", 80*time.Millisecond, "per-request timeout")
	virtual := flag.Bool("virtual", false, "run on the loop's virtual clock")
	flag.Parse()
	var opts []asyncio.LoopOption
	if *virtual {
		opts = append(opts, asyncio.WithVirtualTime())
	}
	if err := run(*n, *limit, *timeout, opts...); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
