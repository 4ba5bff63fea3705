//go:build unix

package main

import (
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The fan-out toolkit (issue 23), beside the plain form users write by
// hand:
//
//	-w bounded-group        n children, 100 at a time, in a BoundedTaskGroup
//	-w taskgroup-semaphore  the same with a TaskGroup and a Semaphore
//	-w limiter-waiters      n tasks waiting on one Limiter (1,000/s, burst 1)
//	                        on the virtual clock: wall time per tick, and
//	                        wakeups per granted token (must be 1)
//
// Each child of the group workloads takes one bare yield (Sleep(t, 0)),
// so the figure is the overhead per child, not work.

// toolkitLimit is the concurrency of the group workloads (W9's 100).
const toolkitLimit = 100

func init() {
	workloads["bounded-group"] = boundedGroup
	workloads["taskgroup-semaphore"] = taskGroupSemaphore
	workloads["limiter-waiters"] = limiterWaiters
	defaultN["bounded-group"] = 100_000
	defaultN["taskgroup-semaphore"] = 100_000
	defaultN["limiter-waiters"] = 100_000
}

func boundedGroup(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		done, peak := 0, 0
		t0 := time.Now()
		err := asyncio.BoundedTaskGroup(t, toolkitLimit, func(g *asyncio.BoundedGroup) error {
			for range n {
				if _, err := asyncio.SpawnBoundedErr(g, func(t *asyncio.T) error {
					peak = max(peak, g.Running())
					if err := asyncio.Sleep(t, 0); err != nil {
						return err
					}
					done++
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		el := time.Since(t0)
		if err != nil {
			return nil, err
		}
		if done != n || peak != min(n, toolkitLimit) {
			return nil, fmt.Errorf("%d done (want %d), peak %d running (want %d)", done, n, peak, min(n, toolkitLimit))
		}
		return record("bounded-group", "", n, el, rec{"limit": toolkitLimit}), nil
	})
}

func taskGroupSemaphore(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		done, running, peak := 0, 0, 0
		sem := asyncio.NewSemaphore(toolkitLimit)
		t0 := time.Now()
		err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for range n {
				if _, err := asyncio.SpawnErr(g, func(t *asyncio.T) error {
					if err := sem.Acquire(t); err != nil {
						return err
					}
					defer sem.Release()
					running++
					peak = max(peak, running)
					defer func() { running-- }()
					if err := asyncio.Sleep(t, 0); err != nil {
						return err
					}
					done++
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		})
		el := time.Since(t0)
		if err != nil {
			return nil, err
		}
		if done != n || peak != min(n, toolkitLimit) {
			return nil, fmt.Errorf("%d done (want %d), peak %d running (want %d)", done, n, peak, min(n, toolkitLimit))
		}
		return record("taskgroup-semaphore", "", n, el, rec{"limit": toolkitLimit}), nil
	})
}

func limiterWaiters(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		const rate = 1000
		lim := asyncio.NewLimiter(rate, 1)
		tasks := make([]*asyncio.Task[struct{}], n)
		for i := range tasks {
			tasks[i] = asyncio.CreateTaskErr(t, func(t *asyncio.T) error { return lim.Acquire(t) })
		}
		// Let every task reach the limiter before the clock starts.
		if err := asyncio.Sleep(t, 0); err != nil {
			return nil, err
		}
		waiting := lim.Waiters()
		st0 := lim.Stats()
		t0 := time.Now()
		for _, task := range tasks {
			if _, err := task.Await(t); err != nil {
				return nil, err
			}
		}
		el := time.Since(t0)
		st := lim.Stats()
		grants, wakeups, ticks := st.Granted-st0.Granted, st.Wakeups-st0.Wakeups, st.Ticks-st0.Ticks
		if st.Granted != int64(n) || waiting != n-1 || wakeups != int64(waiting) {
			return nil, fmt.Errorf("granted %d of %d, %d waited, %d wakeups", st.Granted, n, waiting, wakeups)
		}
		if want := time.Duration(n-1) * time.Second / rate; t.Loop().Time() < want {
			return nil, fmt.Errorf("last grant at %v, before %v", t.Loop().Time(), want)
		}
		r := record("limiter-waiters", "", n, el, rec{
			"waiters":           waiting,
			"wakeups_per_grant": round4(float64(wakeups) / float64(grants)),
			"ticks":             ticks,
			"ns_per_tick":       round1(float64(el.Nanoseconds()) / float64(ticks)),
			"virtual_s":         round4(t.Loop().Time().Seconds()),
		})
		return r, nil
	}, asyncio.WithVirtualTime())
}
