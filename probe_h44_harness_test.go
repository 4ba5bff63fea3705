//go:build linux

package asyncio

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// Probe h44: nothing the loop owns outlives Close, whatever moment Close
// comes. h44CloseAtEach runs a scenario on a fresh loop, stops it after
// its k-th iteration and closes it (Loop.Close, or Runner.Close, which
// cancels and drains the pending tasks first), for k = 1, 2, ... until the
// scenario's main task ends before the k-th iteration. After each Close:
// Close returned nil, no descriptor is left open (/proc/self/fd) and no
// goroutine left (goleak, once the scenario's own foreign goroutines were
// told to stop), the exception handler heard only what the scenario
// expects, and the scenario's checks hold.

// h44Run is what a scenario records for the checks after Close.
type h44Run struct {
	viaRunner bool
	reports   []string
	allowed   []string
	// checks run after Close; completed: main ended before the stop.
	checks []func(t *testing.T, completed bool)
	// stops end the scenario's own foreign goroutines, after Close and
	// before the checks and the leak check.
	stops []func(t *testing.T)
}

func (r *h44Run) after(fn func(t *testing.T, completed bool)) { r.checks = append(r.checks, fn) }
func (r *h44Run) allow(text string)                           { r.allowed = append(r.allowed, text) }
func (r *h44Run) onEnd(fn func(t *testing.T))                 { r.stops = append(r.stops, fn) }

// h44CloseAtEach is the probe's driver; maxK bounds the moments tried.
func h44CloseAtEach(t *testing.T, maxK int, opts []LoopOption, scenario func(tk *T, r *h44Run) error) {
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
					completed = h44CloseAfter(t, k, viaRunner, opts, scenario)
				})
				if completed || t.Failed() {
					t.Logf("completed normally at k=%d", k)
					return
				}
			}
		})
	}
}

func h44CloseAfter(t *testing.T, k int, viaRunner bool, opts []LoopOption, scenario func(tk *T, r *h44Run) error) bool {
	fdsBefore := h44OpenFDs()
	ignore := goleak.IgnoreCurrent()
	runner := NewRunner(opts...)
	l := runner.Loop()
	run := &h44Run{viaRunner: viaRunner}
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		msg := c.Message
		if c.Err != nil {
			msg += ": " + c.Err.Error()
		}
		run.reports = append(run.reports, msg)
	})
	stop := NewFuture[struct{}](l)
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
	main := CreateTaskErr(l, func(tk *T) error { return scenario(tk, run) }, WithName("scenario"))
	main.AddDoneCallback(end)
	var completed bool
	if viaRunner {
		if _, err := RunWith(runner, stop.Await); err != nil {
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
	for _, s := range run.stops {
		s(t)
	}
	for _, c := range run.checks {
		c(t, completed)
	}
	for _, rep := range run.reports {
		ok := strings.HasPrefix(rep, "Task was destroyed but it is pending!")
		for _, a := range run.allowed {
			ok = ok || strings.Contains(rep, a)
		}
		if !ok {
			t.Errorf("reported: %s", rep)
		}
	}
	var leaked []string
	for fd, target := range h44OpenFDs() {
		if _, ok := fdsBefore[fd]; !ok {
			leaked = append(leaked, fmt.Sprintf("%d -> %s", fd, target))
		}
	}
	if len(leaked) > 0 {
		t.Errorf("descriptors left open: %s", strings.Join(leaked, ", "))
	}
	if err := goleak.Find(ignore); err != nil {
		t.Error(err)
	}
	return completed
}

// h44OpenFDs maps the process's open descriptors to what they are.
func h44OpenFDs() map[int]string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := map[int]string{}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "/proc/") {
			continue
		}
		fds[fd] = target
	}
	return fds
}
