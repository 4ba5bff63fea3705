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
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
