package asyncio_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
)

// A bounded task group runs at most 2 children at once; the others start
// in spawn order as slots free. (Virtual time makes the timings exact.)
func ExampleBoundedTaskGroup() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		err := asyncio.BoundedTaskGroup(t, 2, func(g *asyncio.BoundedGroup) error {
			for i := range 4 {
				_, err := asyncio.SpawnBoundedErr(g, func(t *asyncio.T) error {
					fmt.Printf("%v: fetch %d starts (%d running)\n", t.Loop().Time(), i, g.Running())
					return asyncio.Sleep(t, 100*time.Millisecond)
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		fmt.Println("group:", err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// 0s: fetch 0 starts (1 running)
	// 0s: fetch 1 starts (2 running)
	// 100ms: fetch 2 starts (1 running)
	// 100ms: fetch 3 starts (2 running)
	// group: <nil>
}

// GatherBounded returns the results in argument order, with at most
// limit functions in flight.
func ExampleGatherBounded() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		square := func(x int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				return x * x, asyncio.Sleep(t, time.Duration(10-x)*time.Millisecond)
			}
		}
		res, err := asyncio.GatherBounded(t, 2, square(1), square(2), square(3), square(4))
		fmt.Println(res, err, t.Loop().Time())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output: [1 4 9 16] <nil> 15ms
}

// AsCompletedBounded yields each function's index and outcome as it
// completes; breaking out cancels the rest.
func ExampleAsCompletedBounded() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		job := func(d time.Duration) func(*asyncio.T) (time.Duration, error) {
			return func(t *asyncio.T) (time.Duration, error) { return d, asyncio.Sleep(t, d) }
		}
		for i, o := range asyncio.AsCompletedBounded(t, 2, job(30*time.Millisecond), job(10*time.Millisecond), job(5*time.Millisecond)) {
			fmt.Println(i, o.Value, o.Err)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// 1 10ms <nil>
	// 2 5ms <nil>
	// 0 30ms <nil>
}

// A token bucket of 10 per second with a burst of 5 admits five requests
// at once, then one every 100ms.
func ExampleLimiter() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		lim := asyncio.NewLimiter(10, 5)
		for i := range 7 {
			if err := lim.Acquire(t); err != nil {
				return struct{}{}, err
			}
			fmt.Printf("request %d at %v\n", i, t.Loop().Time())
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// request 0 at 0s
	// request 1 at 0s
	// request 2 at 0s
	// request 3 at 0s
	// request 4 at 0s
	// request 5 at 100ms
	// request 6 at 200ms
}

// Retry with exponential backoff and full jitter; a seeded source (here a
// constant one) makes the schedule deterministic.
func ExampleRetry() {
	errUnavailable := errors.New("503")
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		policy := asyncio.RetryPolicy{
			MaxAttempts: 5,
			Initial:     100 * time.Millisecond,
			Rand:        asyncio.RandFunc(func() float64 { return 0.5 }),
		}
		body, err := asyncio.Retry(t, policy, func(t *asyncio.T, a asyncio.Attempt) (string, error) {
			fmt.Printf("attempt %d at %v (last error: %v)\n", a.N, t.Loop().Time(), a.LastErr)
			if a.N < 3 {
				return "", errUnavailable
			}
			return "hello", nil
		})
		fmt.Println(body, err)
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// attempt 1 at 0s (last error: <nil>)
	// attempt 2 at 50ms (last error: 503)
	// attempt 3 at 150ms (last error: 503)
	// hello <nil>
}

// A hedged request: if the first attempt has not answered after 20ms a
// second starts; the first answer wins and the other attempt is cancelled
// and awaited.
func ExampleHedge() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		latency := []time.Duration{500 * time.Millisecond, 30 * time.Millisecond}
		v, err := asyncio.Hedge(t, asyncio.HedgePolicy{Delay: 20 * time.Millisecond},
			func(t *asyncio.T, attempt int) (string, error) {
				if err := asyncio.Sleep(t, latency[attempt]); err != nil {
					fmt.Printf("attempt %d cancelled at %v\n", attempt, t.Loop().Time())
					return "", err
				}
				return fmt.Sprint("answer from attempt ", attempt), nil
			})
		fmt.Println(v, err, t.Loop().Time())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// attempt 0 cancelled at 50ms
	// answer from attempt 1 <nil> 50ms
}

// FirstSuccess races replicas: the first success wins, failures before it
// do not matter, and the losers are cancelled and awaited.
func ExampleFirstSuccess() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		replica := func(name string, d time.Duration, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, d); err != nil {
					return "", err
				}
				if fail {
					return "", errors.New(name + " is down")
				}
				return name, nil
			}
		}
		v, err := asyncio.FirstSuccess(t,
			replica("eu", 40*time.Millisecond, false),
			replica("us", 10*time.Millisecond, true),
			replica("ap", 25*time.Millisecond, false))
		fmt.Println(v, err, t.Loop().Time())
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output: ap <nil> 25ms
}

// StaggeredRace is asyncio.staggered.staggered_race, as happy eyeballs
// uses it: each address gets its turn when the one before it fails or has
// not answered within the delay; the first to connect wins.
func ExampleStaggeredRace() {
	asyncio.Run(func(t *asyncio.T) (struct{}, error) {
		dial := func(addr string, d time.Duration, fail bool) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				if err := asyncio.Sleep(t, d); err != nil {
					return "", err
				}
				if fail {
					return "", errors.New(addr + ": connection refused")
				}
				return addr, nil
			}
		}
		winner, index, errs, err := asyncio.StaggeredRace(t, 250*time.Millisecond,
			dial("[2001:db8::1]:443", 10*time.Millisecond, true), // fails: the next starts at once
			dial("[2001:db8::2]:443", time.Hour, false),          // hangs: the next starts after 250ms
			dial("192.0.2.1:443", 30*time.Millisecond, false))
		fmt.Println(winner, index, err, t.Loop().Time())
		for i, e := range errs {
			fmt.Println(i, e)
		}
		return struct{}{}, nil
	}, asyncio.WithVirtualTime())
	// Output:
	// 192.0.2.1:443 2 <nil> 290ms
	// 0 [2001:db8::1]:443: connection refused
	// 1 asyncio: cancelled
	// 2 <nil>
}
