//go:build unix && go1.25

package ports_test

// p240 runs blocking functions on the default executor (time.Sleep in
// the jobs), so it runs in a testing/synctest bubble on the loop's real
// clock (runPortBubble, as p170-p179): the jobs' sleeps and the loop's
// timers share one fake clock.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// lockedLines is the program's thread_said list under its threading.Lock.
type lockedLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *lockedLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// ---------------------------------------------------------------------------
// p240_run_in_executor.py

func TestPortRunInExecutor(t *testing.T) {
	runPortBubble(t, cpythonTrace("p240_run_in_executor"), func(p *probe, tk *asyncio.T) error {
		threadSaid := &lockedLines{}
		blockingIOTask := func(name string, secs time.Duration) func(context.Context) (string, error) {
			return func(context.Context) (string, error) {
				threadSaid.add(fmt.Sprintf("[%s] Starting blocking operation...", name))
				time.Sleep(secs) // Simulate a slow blocking operation
				threadSaid.add(fmt.Sprintf("[%s] Blocking operation finished.", name))
				return "Result from " + name, nil
			}
		}
		sleepUntil := func(t *asyncio.T, at time.Duration) error {
			return asyncio.Sleep(t, at-(t.Loop().Time()-p.t0))
		}
		ticker := func(stop *asyncio.Event) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				n := 0
				for !stop.IsSet() {
					n++
					if err := sleepUntil(t, time.Duration(n)*100*ms-30*ms); err != nil {
						return 0, err
					}
					p.log("tick %d", n)
				}
				return n, nil
			}
		}

		p.restart()
		stop := asyncio.NewEvent()
		tick := asyncio.CreateTask(tk, ticker(stop))
		fa := asyncio.RunInExecutor(tk, blockingIOTask("A", 200*ms))
		fb := asyncio.RunInExecutor(tk, blockingIOTask("B", 300*ms))
		fa.AddDoneCallback(func() {
			r, _ := fa.Result()
			p.log("A's future done: %s", r)
		})
		results, err := asyncio.Gather(tk, fa, fb).Await(tk)
		if err != nil {
			return err
		}
		p.log("results %s", pstrs(results))

		if err := sleepUntil(tk, 400*ms); err != nil {
			return err
		}
		_, err = asyncio.WaitFor(tk, 200*ms, asyncio.RunInExecutor(tk, blockingIOTask("C", 340*ms)))
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("C timed out: %s but its thread goes on", pd(err))
		} else if err != nil {
			return err
		}
		if err := sleepUntil(tk, 900*ms); err != nil {
			return err
		}
		stop.Set()
		n, err := tick.Await(tk)
		if err != nil {
			return err
		}
		p.log("ticks %d", n)
		lines := threadSaid.all()
		sort.Strings(lines)
		for _, line := range lines {
			p.log("%s", line)
		}
		return nil
	})
}
