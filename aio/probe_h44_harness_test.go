//go:build linux

package aio

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/go-asyncio/asyncio"
)

// Probe h44: nothing the loop owns outlives Close, whatever moment Close
// comes. closeAtEachIteration runs a scenario on a fresh loop, stops the
// loop after its k-th iteration and closes it, for k = 1, 2, ... until the
// scenario's main task ends before the k-th iteration. After each Close:
// Close returned nil, no descriptor, goroutine or child process is left
// (clean: /proc and goleak), every child the scenario started is reaped
// (wait4 says ECHILD), and check sees what the scenario left (completed:
// main ended normally).

// h44State is what a scenario records for the checks after Close.
type h44State struct {
	pids []int // children started: each must be reaped by Close
	// viaRunner: the loop is a Runner's, closed by Runner.Close (every
	// pending task cancelled and drained first) instead of Loop.Close.
	viaRunner bool
	// reports are the exception handler's messages; those starting with
	// containing one of allowed are expected, any other fails the run.
	reports []string
	allowed []string
	// checks run after Close, in order; completed tells whether main ended
	// before the loop was stopped.
	checks []func(t *testing.T, completed bool)
}

// allow makes reports containing text expected.
func (s *h44State) allow(text string) { s.allowed = append(s.allowed, text) }

// after registers a check to run once the loop is closed.
func (s *h44State) after(fn func(t *testing.T, completed bool)) { s.checks = append(s.checks, fn) }

// closeAtEachIteration is the probe's driver; maxK bounds the moments
// tried (the scenario must complete before it). opts are the loop's.
func closeAtEachIteration(t *testing.T, maxK int, opts []asyncio.LoopOption, scenario func(at *asyncio.T, s *h44State) error) {
	t.Helper()
	for _, viaRunner := range []bool{false, true} {
		name := "Loop.Close"
		if viaRunner {
			name = "Runner.Close"
		}
		t.Run(name, func(t *testing.T) {
			for k := 1; ; k++ {
				if k > maxK {
					t.Fatalf("the scenario did not complete within %d iterations", maxK)
				}
				var completed bool
				t.Run(fmt.Sprintf("k%d", k), func(t *testing.T) {
					completed = closeAfterIteration(t, k, viaRunner, opts, scenario)
				})
				if completed || t.Failed() {
					t.Logf("completed normally at k=%d", k)
					return
				}
			}
		})
	}
}

// closeAfterIteration is one run of closeAtEachIteration; it returns
// whether main completed before the k-th iteration.
func closeAfterIteration(t *testing.T, k int, viaRunner bool, opts []asyncio.LoopOption, scenario func(at *asyncio.T, s *h44State) error) bool {
	clean(t) // registered first: runs last, after the checks below
	runner := asyncio.NewRunner(opts...)
	l := runner.Loop()
	s := &h44State{viaRunner: viaRunner}
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		msg := c.Message
		if c.Err != nil {
			msg += ": " + c.Err.Error()
		}
		if c.CreatedAt != "" {
			msg += " (created at " + c.CreatedAt + ")"
		}
		s.reports = append(s.reports, msg)
	})
	stop := asyncio.NewFuture[struct{}](l) // the Runner's main returns then
	end := func() {
		if viaRunner {
			if !stop.Done() {
				stop.SetResult(struct{}{})
			}
		} else {
			l.Stop()
		}
	}
	iter := 0
	l.SetBeforePoll(func() {
		if iter++; iter == k {
			end()
		}
	})
	main := asyncio.CreateTaskErr(l, func(at *asyncio.T) error { return scenario(at, s) })
	main.AddDoneCallback(end)
	var completed bool
	if viaRunner {
		if _, err := asyncio.RunWith(runner, stop.Await); err != nil {
			t.Fatalf("RunWith: %v", err)
		}
		completed = main.Done() && !main.Cancelled()
		if err := runner.Close(); err != nil {
			t.Errorf("Runner.Close: %v", err)
		}
		if !main.Done() {
			t.Errorf("main not done after Runner.Close")
		}
	} else {
		if err := l.RunForever(); err != nil {
			t.Fatalf("RunForever: %v", err)
		}
		completed = main.Done()
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if completed && main.Err() != nil {
		t.Errorf("main failed: %v", main.Err())
	}
	for _, r := range s.reports {
		ok := strings.HasPrefix(r, "Task was destroyed but it is pending!")
		for _, a := range s.allowed {
			ok = ok || strings.Contains(r, a)
		}
		if !ok {
			t.Errorf("reported at Close: %s", r)
		}
	}
	if !l.IsClosed() {
		t.Errorf("IsClosed false after Close")
	}
	for _, pid := range s.pids {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if !errors.Is(err, syscall.ECHILD) {
			t.Errorf("child %d not reaped by Close: wait4 says %v", pid, err)
		}
	}
	for _, c := range s.checks {
		c(t, completed)
	}
	return completed
}
