//go:build unix

package main

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// The subprocess workloads (issue 12), beside peers/subprocess_peers.py,
// which runs the same two in asyncio and uvloop:
//
//	spawn: spawn and wait for n `true` processes, at most 100 at a time
//	       (a Semaphore), stdio inherited; ns per process.
//	cat:   n MiB through `cat` with Process.Communicate; MB/s.
//
// Each repeats its measurement subprocessRuns times in the one process and
// records the median run, as the Python peer does.

// subprocessRuns is how many measured runs a subprocess workload makes.
var subprocessRuns = 3

// spawnLimit is the spawn workload's concurrency (its Semaphore).
const spawnLimit = 100

func init() {
	workloads["spawn"] = spawnTrue
	workloads["cat"] = catCommunicate
	defaultN["spawn"] = 1000
	defaultN["cat"] = 64
}

// medianRun runs one measured run subprocessRuns times and returns the
// median duration.
func medianRun(run func() (time.Duration, error)) (time.Duration, error) {
	var els []time.Duration
	for range max(subprocessRuns, 1) {
		el, err := run()
		if err != nil {
			return 0, err
		}
		els = append(els, el)
	}
	slices.Sort(els)
	return els[len(els)/2], nil
}

// spawnTrue is the spawn workload: n processes.
func spawnTrue(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		el, err := medianRun(func() (time.Duration, error) {
			sem := asyncio.NewSemaphore(spawnLimit)
			t0 := time.Now()
			err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
				for range n {
					if _, err := asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) {
						if err := sem.Acquire(t); err != nil {
							return struct{}{}, err
						}
						defer sem.Release()
						p, err := aio.CreateSubprocessExec(t, "true", nil)
						if err != nil {
							return struct{}{}, err
						}
						if rc, err := p.Wait(t); err != nil || rc != 0 {
							return struct{}{}, fmt.Errorf("true: %d %v", rc, err)
						}
						return struct{}{}, nil
					}); err != nil {
						return err
					}
				}
				return nil
			})
			return time.Since(t0), err
		})
		if err != nil {
			return nil, err
		}
		return record("spawn", "true", n, el, rec{"limit": spawnLimit, "runs": subprocessRuns}), nil
	})
}

// catCommunicate is the cat workload: n MiB.
func catCommunicate(mib int) (rec, error) {
	data := bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, mib<<16)
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		el, err := medianRun(func() (time.Duration, error) {
			p, err := aio.CreateSubprocessExec(t, "cat", nil, aio.WithStdin(aio.Pipe), aio.WithStdout(aio.Pipe))
			if err != nil {
				return 0, err
			}
			t0 := time.Now()
			out, _, err := p.Communicate(t, data)
			el := time.Since(t0)
			if err != nil {
				return 0, err
			}
			if !bytes.Equal(out, data) {
				return 0, fmt.Errorf("cat returned %d bytes, want %d", len(out), len(data))
			}
			return el, nil
		})
		if err != nil {
			return nil, err
		}
		return record("cat", "communicate", mib, el, rec{
			"mib": mib, "runs": subprocessRuns,
			"mb_per_s": round1(float64(len(data)) / el.Seconds() / 1e6),
		}), nil
	})
}
