// Command lab shows three asyncio behaviours side by side, each printed so
// a reader can see it:
//
//  1. serial sleeps take the sum of their delays, concurrent sleeps the
//     longest one (about 2 units against about 1);
//  2. cancelling a task runs its cleanup (a deferred call), like a
//     finally block around an await;
//  3. a task that swallows its cancellation ends normally, with a result,
//     and Cancelled() false.
//
// It runs on real time; pass -virtual to run on the loop's virtual clock,
// where the same program takes microseconds and prints the same figures.
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

const unit = 100 * time.Millisecond

// out is where the lab prints; tests replace it.
var out io.Writer = os.Stdout

func sleeper(t *asyncio.T) (struct{}, error) {
	return struct{}{}, asyncio.Sleep(t, unit)
}

func serialVsConcurrent(t *asyncio.T) error {
	l := t.Loop()
	start := l.Time()
	for range 2 {
		if err := asyncio.Sleep(t, unit); err != nil {
			return err
		}
	}
	serial := l.Time() - start

	start = l.Time()
	a := asyncio.CreateTask(t, sleeper)
	b := asyncio.CreateTask(t, sleeper)
	if err := t.Await(a); err != nil {
		return err
	}
	if err := t.Await(b); err != nil {
		return err
	}
	concurrent := l.Time() - start
	fmt.Fprintf(out, "1. two sleeps of 1 unit: serial %.1f units, concurrent %.1f units\n",
		float64(serial)/float64(unit), float64(concurrent)/float64(unit))
	return nil
}

func cleanupOnCancel(t *asyncio.T) error {
	var cleaned bool
	worker := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) {
		defer func() { cleaned = true }() // finally: runs when the cancellation unwinds the task
		return 0, asyncio.Sleep(t, time.Hour)
	})
	if err := asyncio.Sleep(t, 0); err != nil { // let the worker start and park
		return err
	}
	worker.Cancel("shutting down")
	_, err := worker.Await(t)
	var ce *asyncio.CancelledError
	fmt.Fprintf(out, "2. cancelled worker: error %q (CancelledError: %v), cleanup ran: %v, Cancelled(): %v\n",
		err, errors.As(err, &ce), cleaned, worker.Cancelled())
	return nil
}

func swallowedCancel(t *asyncio.T) error {
	stubborn := asyncio.CreateTask(t, func(t *asyncio.T) (string, error) {
		if err := asyncio.Sleep(t, time.Hour); asyncio.IsCancelled(err) {
			return "finished anyway", nil // except CancelledError: return ...
		}
		return "slept", nil
	})
	if err := asyncio.Sleep(t, 0); err != nil {
		return err
	}
	stubborn.Cancel()
	v, err := stubborn.Await(t)
	fmt.Fprintf(out, "3. swallowed cancellation: result %q, error %v, Cancelled(): %v, Cancelling(): %d\n",
		v, err, stubborn.Cancelled(), stubborn.Cancelling())
	return nil
}

func main() {
	virtual := flag.Bool("virtual", false, "run on the loop's virtual clock")
	flag.Parse()
	if err := run(*virtual); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(virtual bool) error {
	var opts []asyncio.LoopOption
	if virtual {
		opts = append(opts, asyncio.WithVirtualTime())
	}
	_, err := asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		for _, step := range []func(*asyncio.T) error{serialVsConcurrent, cleanupOnCancel, swallowedCancel} {
			if err := step(t); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	}, opts...)
	return err
}
