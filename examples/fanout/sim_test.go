//go:build unix

package main

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// The adapter's client and server code (serveOnLoop, getOverConn) on the
// simulated network (issue 22): one GET to each of many servers, at most
// limit in flight, each under a timeout. The seed decides each server's
// fate: healthy, a 30 s stall of its connection once the request arrived
// (the client times out), or a reset before the response arrives (the
// client's read fails with ECONNRESET). Links have latency and jitter
// from the seed too. On the loop's virtual clock a run takes a few
// milliseconds of real time.

const (
	simHealthy = iota
	simStall
	simReset
)

type simOutcome struct {
	ok, timedOut, reset int
	serverResets        int    // servers' handlers that saw their reset
	want                [3]int // servers of each fate
	elapsed             time.Duration
	trace               []string
}

func (o simOutcome) check() error {
	if o.serverResets > o.want[simReset] {
		return fmt.Errorf("%d servers saw a reset, %d were reset", o.serverResets, o.want[simReset])
	}
	if o.ok != o.want[simHealthy] || o.timedOut != o.want[simStall] || o.reset != o.want[simReset] {
		return fmt.Errorf("%d ok, %d timed out, %d reset; want %d, %d, %d", o.ok, o.timedOut, o.reset,
			o.want[simHealthy], o.want[simStall], o.want[simReset])
	}
	return nil
}

// simFanOut runs the fan-out to servers simulated servers with seed.
func simFanOut(seed uint64, servers, limit int, timeout time.Duration) (simOutcome, error) {
	var out simOutcome
	_, err := asyncio.Run(func(t *asyncio.T) (_ struct{}, err error) {
		// A server whose connection is reset fails its Drain, as on a
		// real socket, and its handler's error is reported: count those;
		// anything else reported is a failure.
		var unexpected []string
		t.Loop().SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
			if errors.Is(c.Err, syscall.ECONNRESET) {
				out.serverResets++
				return
			}
			unexpected = append(unexpected, fmt.Sprintf("%s: %v", c.Message, c.Err))
		})
		defer func() {
			if len(unexpected) > 0 && err == nil {
				err = fmt.Errorf("reported: %v", unexpected)
			}
		}()
		n := aio.NewSimNetwork(t, seed)
		n.SetDefaultLink(aio.LinkConfig{Latency: time.Millisecond, Jitter: 5 * time.Millisecond})
		client := n.Host("client")
		rng := n.Rand()
		addrs := make([]string, servers)
		for i := range servers {
			h := n.Host(fmt.Sprintf("server%d", i))
			fate := simHealthy
			switch r := rng.IntN(10); {
			case r == 8:
				fate = simStall
			case r == 9:
				fate = simReset
			}
			out.want[fate]++
			// The response comes 2 ms after the request; before that the
			// server's connection is stalled or reset, by fate.
			srv, err := serveOnLoop(t, func(string) time.Duration {
				for _, c := range n.Conns() {
					if c.Server().String() != addrs[i] {
						continue
					}
					switch fate {
					case simStall:
						c.StallFor(30 * time.Second)
					case simReset:
						n.At(t.Loop().Time()+time.Millisecond, c.Reset)
					}
				}
				return 2 * time.Millisecond
			}, aio.WithNetwork(h))
			if err != nil {
				return struct{}{}, err
			}
			defer srv.shutdown(t)
			addrs[i] = srv.Addr().String()
		}
		sem := asyncio.NewSemaphore(limit)
		err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i, addr := range addrs {
				asyncio.SpawnErr(g, func(t *asyncio.T) error {
					if err := sem.Acquire(t); err != nil {
						return err
					}
					defer sem.Release()
					path := fmt.Sprintf("/item/%d", i)
					body, err := asyncio.WaitForFunc(t, timeout, func(t *asyncio.T) (string, error) {
						return getOverConn(t, addr, path, aio.WithNetwork(client))
					})
					switch {
					case errors.Is(err, asyncio.ErrTimeout):
						out.timedOut++
					case errors.Is(err, syscall.ECONNRESET):
						out.reset++
					case err != nil:
						return fmt.Errorf("%s%s: %w", addr, path, err)
					case body != "response to "+path:
						return fmt.Errorf("%s%s: body %q", addr, path, body)
					default:
						out.ok++
					}
					return nil
				})
			}
			return nil
		})
		out.elapsed = t.Loop().Time()
		out.trace = n.Trace()
		return struct{}{}, err
	}, asyncio.WithVirtualTime())
	return out, err
}

// 100 servers with 30 s stalls and resets: the outcome is what the seed
// chose, the run ends at the timeout's scale of virtual time (not 30 s),
// and the same seed gives the same trace.
func TestSimFanOut100(t *testing.T) {
	start := time.Now()
	o, err := simFanOut(1, 100, 20, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if o.want[simStall] == 0 || o.want[simReset] == 0 {
		t.Fatalf("seed 1 chose no stall or no reset: %v", o.want)
	}
	if o.elapsed > 10*time.Second {
		t.Errorf("the fan-out took %v of virtual time: the stalls were waited out", o.elapsed)
	}
	again, err := simFanOut(1, 100, 20, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Join(o.trace, "\n"), strings.Join(again.trace, "\n"); a != b {
		t.Fatalf("seed 1 gave two different traces")
	}
	t.Logf("100 servers (%d stalled, %d reset): %v of virtual time, %v of real time for two runs, %d trace lines",
		o.want[simStall], o.want[simReset], o.elapsed, time.Since(start), len(o.trace))
}

// 1,000 seeds of a 20-server fan-out; the first failing seed is reported
// and reproduces with simFanOut(seed, ...).
func TestSimFanOutSeeds(t *testing.T) {
	start := time.Now()
	seed, err := aio.SearchSeeds(1, 1000, func(seed uint64) error {
		o, err := simFanOut(seed, 20, 5, time.Second)
		if err != nil {
			return err
		}
		return o.check()
	})
	if err != nil {
		t.Fatalf("%v (reproduce with simFanOut(%d, 20, 5, time.Second))", err, seed)
	}
	t.Logf("1000 seeds in %v", time.Since(start))
}
