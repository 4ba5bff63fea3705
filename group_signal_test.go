//go:build unix

package asyncio

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C for a whole LoopGroup, as Run handles it for one loop (RUN-4).

func TestLoopGroup_FirstSIGINTCancelsEveryMainAndWaitsForTheirCleanup(t *testing.T) {
	sigintAtDefault(t)
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	ready := make(chan int, 2)
	var cleaned sync.WaitGroup
	cleaned.Add(2)
	type result struct {
		vals []int
		err  error
	}
	out := make(chan result, 1)
	go func() {
		vals, err := RunEach(g, func(tk *T, i int) (int, error) {
			defer cleaned.Done()
			ready <- i
			_, err := NewFuture[int](tk).Await(tk)
			if err == nil {
				return 0, errors.New("not cancelled")
			}
			// Cleanup that awaits still runs.
			if err := Sleep(tk, 0); err != nil {
				return 0, err
			}
			return 0, err
		})
		out <- result{vals, err}
	}()
	<-ready
	<-ready
	raise(t, syscall.SIGINT)
	r := <-out
	cleaned.Wait()
	if !errors.Is(r.err, ErrInterrupted) {
		t.Errorf("RunEach after SIGINT: %v, want ErrInterrupted", r.err)
	}
}

// RunGroup: one main, the other loops serving; its cleanup after Ctrl-C
// can still call them.
func TestLoopGroup_RunGroupServesOtherLoopsUntilMainIsDoneEvenAfterSIGINT(t *testing.T) {
	sigintAtDefault(t)
	g := NewLoopGroup(WithLoops(3))
	defer g.Close()
	ready := make(chan struct{}, 1)
	out := make(chan error, 1)
	var sum int
	go func() {
		_, err := RunGroup(g, func(tk *T) (int, error) {
			ready <- struct{}{}
			_, err := NewFuture[int](tk).Await(tk)
			for i := 1; i < g.Len(); i++ {
				v, cerr := CallOn(tk, g.Loop(i), func(rt *T) (int, error) { return g.Index(rt.Loop()), nil })
				if cerr != nil {
					return 0, cerr
				}
				sum += v
			}
			return 0, err
		})
		out <- err
	}()
	<-ready
	raise(t, syscall.SIGINT)
	if err := <-out; !errors.Is(err, ErrInterrupted) || sum != 3 {
		t.Errorf("RunGroup after SIGINT: %v, calls in cleanup summed %d (want 3)", err, sum)
	}
	for i, l := range g.Loops() {
		if l.IsRunning() {
			t.Errorf("loop %d still running after RunGroup", i)
		}
	}
}

// A main that ends its goroutine with runtime.Goexit (t.FailNow does)
// does not keep RunEach waiting; its loop is reported failed. (Loop 1
// handles SIGINT itself, so that its Runner starts no SIGINT watch, which
// the Goexit would leave behind.)
func TestLoopGroup_GoexitInAMainDoesNotHangRunEach(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithFailurePolicy(IsolateFailure))
	if err := g.Loop(1).AddSignalHandler(os.Interrupt, func() {}); err != nil {
		t.Fatal(err)
	}
	g.Loop(1).SetExceptionHandler(func(*Loop, ExceptionContext) {}) // the failed main is reported at Close
	checkRunEachReportsAGoexitOnLoop1(t, g)
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A RunGroup main that ends the caller's goroutine (runtime.Goexit, as
// t.FailNow does) still stops the serving loops on its way out, so a later
// Close finds nothing running (it crashed the process: Runner.Close on a
// loop still serving, from Close's own goroutine).
func TestRunGroup_GoexitInMainStopsTheServingLoops(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	g.Loop(0).SetExceptionHandler(func(*Loop, ExceptionContext) {})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = RunGroup(g, func(tk *T) (int, error) {
			runtime.Goexit()
			return 0, nil
		})
		t.Error("RunGroup returned: the Goexit should have ended its caller")
	}()
	<-done
	for i, l := range g.Loops() {
		if l.IsRunning() {
			t.Errorf("loop %d still running after its RunGroup's main ended the goroutine", i)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// With WithLockOSThread a main's Goexit ends the loop's locked goroutine
// (and its thread): RunEach and RunGroup report it, and the group can
// still close (Close hung, sending work to the dead goroutine; RunGroup
// reported success).
func TestLoopGroup_GoexitOnALockedThread(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithLockOSThread(), WithFailurePolicy(IsolateFailure))
	for _, l := range g.Loops() {
		if err := l.AddSignalHandler(os.Interrupt, func() {}); err != nil {
			t.Fatal(err)
		}
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	}
	checkRunEachReportsAGoexitOnLoop1(t, g)
	var le *LoopError
	_, err := RunGroup(g, func(tk *T) (int, error) {
		runtime.Goexit()
		return 1, nil
	})
	if !errors.As(err, &le) || le.Index != 0 || !strings.Contains(err.Error(), "Goexit") {
		t.Errorf("RunGroup: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d not closed", i)
		}
	}
}

// A Close called while another goroutine's Close is still at work (a
// signal handler and a deferred Close) waits for the group to be closed
// instead of returning at once.
func TestLoopGroup_ConcurrentCloseWaitsForTheFirst(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	started, cleaning, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer func() { testHookCloseWaits = nil }()
	testHookCloseWaits = func() { close(release) }
	out := make(chan error, 1)
	go func() {
		_, err := RunGroup(g, func(tk *T) (int, error) {
			close(started)
			err := Sleep(tk, time.Hour)
			close(cleaning)
			<-release //asynciovet:ignore blockingcall holds loop 0 on purpose: its cleanup lasts until the second Close waits
			return 0, err
		})
		out <- err
	}()
	<-started
	first := make(chan error, 1)
	go func() { first <- g.Close() }()
	<-cleaning
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d not closed when the second Close returned", i)
		}
	}
	if err := <-first; err != nil {
		t.Errorf("first Close: %v", err)
	}
	<-out
}

// checkRunEachReportsAGoexitOnLoop1 runs g with a main that ends its
// goroutine (runtime.Goexit) on loop 1: RunEach must report loop 1 as
// failed with the Goexit.
func checkRunEachReportsAGoexitOnLoop1(t *testing.T, g *LoopGroup) {
	t.Helper()
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			runtime.Goexit()
		}
		return 0, nil
	})
	var le *LoopError
	if !errors.As(err, &le) || le.Index != 1 || !strings.Contains(err.Error(), "Goexit") {
		t.Errorf("RunEach: %v", err)
	}
}
