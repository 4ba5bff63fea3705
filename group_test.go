package asyncio

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// LoopGroup (group.go).

func TestLoopGroup_DefaultsToGOMAXPROCSLoopsNamedByIndex(t *testing.T) {
	g := NewLoopGroup()
	defer g.Close()
	if g.Len() != runtime.GOMAXPROCS(0) {
		t.Errorf("Len = %d, want GOMAXPROCS %d", g.Len(), runtime.GOMAXPROCS(0))
	}
	for i, l := range g.Loops() {
		if l.Name() != "loop "+string(rune('0'+i)) || g.Index(l) != i || g.Loop(i) != l {
			t.Errorf("loop %d: name %q index %d", i, l.Name(), g.Index(l))
		}
	}
	if g.Index(NewLoop()) != -1 {
		t.Errorf("Index of a foreign loop is not -1")
	}
}

// Running is true from the start of a RunEach or RunGroup to its end.
func TestLoopGroup_RunningDuringARun(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	if g.Running() {
		t.Errorf("Running before any run")
	}
	inside, err := RunGroup(g, func(*T) (bool, error) { return g.Running(), nil })
	if err != nil || !inside {
		t.Errorf("Running in RunGroup's main: %v, %v", inside, err)
	}
	each, err := RunEach(g, func(*T, int) (bool, error) { return g.Running(), nil })
	if err != nil || !each[0] || !each[1] {
		t.Errorf("Running in RunEach's mains: %v, %v", each, err)
	}
	if g.Running() {
		t.Errorf("Running after the runs")
	}
}

// Every main runs on its own loop, at the same time as the others: each
// waits for the other's item on a cross-loop queue before giving its own
// back (a ping-pong that only two loops running in parallel complete).
func TestLoopGroup_RunEachRunsOneMainPerLoopInParallel(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	q01, q10 := NewCrossQueue[int](1), NewCrossQueue[int](1)
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		if tk.Loop() != g.Loop(i) {
			t.Errorf("main %d runs on the wrong loop", i)
		}
		sum := 0
		for k := 0; k < 100; k++ {
			if i == 0 {
				if err := q01.Put(tk, k); err != nil {
					return 0, err
				}
				v, err := q10.Get(tk)
				if err != nil {
					return 0, err
				}
				sum += v
			} else {
				v, err := q01.Get(tk)
				if err != nil {
					return 0, err
				}
				sum += v
				if err := q10.Put(tk, v*2); err != nil {
					return 0, err
				}
			}
		}
		return sum, nil
	})
	if err != nil || len(vals) != 2 || vals[0] != 9900 || vals[1] != 4950 {
		t.Fatalf("RunEach = %v, %v", vals, err)
	}
}

// With the default policy the failure of one main cancels the others; the
// error names the failed loop only.
func TestLoopGroup_FailureCancelsTheOtherMainsByDefault(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	defer g.Close()
	var mu sync.Mutex
	seen := map[int]string{}
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			return 0, errRemote
		}
		_, err := NewFuture[int](tk).Await(tk) // never done
		//asynciovet:ignore blockingcall a test-only mutex held for a few instructions, never across an await
		mu.Lock()
		seen[i] = describe(err)
		mu.Unlock()
		return 0, err
	})
	var le *LoopError
	if !errors.Is(err, errRemote) || !errors.As(err, &le) || le.Index != 1 || strings.Contains(err.Error(), "loop 0") {
		t.Errorf("RunEach error: %v", err)
	}
	for _, i := range []int{0, 2} {
		if seen[i] != `CancelledError("")` {
			t.Errorf("main %d saw %s, want a cancellation", i, seen[i])
		}
	}
}

func TestLoopGroup_IsolateFailureLeavesTheOtherMainsRunning(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithFailurePolicy(IsolateFailure))
	defer g.Close()
	release := NewFuture[int](g.Loop(0))
	testHookMainDone = func(i int) {
		if i == 1 { // loop 1's failure has been dealt with: let main 0 finish
			_, _ = g.Loop(0).CallSoonThreadsafe(func() { _ = release.SetResult(5) })
		}
	}
	defer func() { testHookMainDone = nil }()
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 1 {
			panic("loop 1 breaks")
		}
		return release.Await(tk)
	})
	var pe *PanicError
	var le *LoopError
	if vals[0] != 5 || !errors.As(err, &pe) || !errors.As(err, &le) || le.Index != 1 {
		t.Errorf("RunEach = %v, %v", vals, err)
	}
}

// Close while the group runs, with calls in flight in both directions:
// every main ends, every call ends, nothing is left.
func TestLoopGroup_CloseWhileRunningWithCallsInFlightBothWays(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	ready := make(chan int, 4)
	out := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			other := g.Loop(1 - i)
			return CallOn(tk, other, func(rt *T) (int, error) {
				ready <- i
				return NewFuture[int](rt).Await(rt)
			})
		})
		out <- err
	}()
	<-ready
	<-ready
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	err := <-out
	if !errors.Is(err, ErrGroupCancelled) {
		t.Errorf("RunEach after Close: %v", err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d not closed", i)
		}
	}
	if _, err := RunEach(g, func(*T, int) (int, error) { return 0, nil }); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("RunEach on a closed group: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLoopGroup_BadInput(t *testing.T) {
	mustPanic(t, "WithLoops(0)", func() { WithLoops(0) })
	mustPanic(t, "unknown policy", func() { WithFailurePolicy(7) })
	g := NewLoopGroup(WithLoops(1))
	defer g.Close()
	mustPanic(t, "Loop(1)", func() { g.Loop(1) })
	mustPanic(t, "nil main", func() { _, _ = RunEach[int](g, nil) })
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		_, err := RunGroup(g, func(*T) (int, error) { return 0, nil })
		return 0, err
	})
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("a run inside a run: %v", err)
	}
}

// The watchdog's report names the blocked loop.
func TestLoopGroup_WatchdogNamesTheBlockedLoop(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithLoopName("loop 3"))
	defer mustClose(t, l)
	reports := make(chan ExceptionContext, 16)
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		if strings.Contains(c.Message, "blocked for at least") {
			select {
			case reports <- c:
			default:
			}
		}
	})
	var c ExceptionContext
	l.CallSoon(func() { c, _ = blockedOnReport(l, reports) })
	runOne(t, l)
	if !strings.HasPrefix(c.Message, "Event loop (loop 3) blocked for at least") {
		t.Errorf("report: %q", c.Message)
	}
}

// Spread: failures come back joined, by task; cancelling the spreading
// task cancels every task it spread.
func TestLoopGroup_SpreadJoinsFailuresAndCancelsEverything(t *testing.T) {
	grp := NewLoopGroup(WithLoops(2))
	defer grp.Close()
	cancelled := make(chan string, 4)
	_, err := RunGroup(grp, func(tk *T) (struct{}, error) {
		vals, err := Spread(tk, grp, 3, func(rt *T, i int) (int, error) {
			if i == 1 {
				return 0, errRemote
			}
			return i * 10, nil
		})
		if vals[0] != 0 || vals[2] != 20 || !errors.Is(err, errRemote) || !strings.Contains(err.Error(), "task 1") {
			t.Errorf("Spread = %v, %v", vals, err)
		}
		up, signal := started(tk)
		var waiting atomicCounter
		spreader := CreateTask(tk, func(st *T) ([]int, error) {
			return Spread(st, grp, 4, func(rt *T, i int) (int, error) {
				if waiting.add() == 4 {
					signal()
				}
				_, err := NewFuture[int](rt).Await(rt)
				cancelled <- describe(err)
				return 0, err
			})
		})
		if _, err := up.Await(tk); err != nil {
			return struct{}{}, err
		}
		spreader.Cancel("enough")
		_, err = spreader.Await(tk)
		if describe(err) != `CancelledError("enough")` {
			t.Errorf("spreader: %s", describe(err))
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		if got := <-cancelled; !strings.HasPrefix(got, "CancelledError(") {
			t.Errorf("spread task %d: %s", k, got)
		}
	}
}

// atomicCounter counts from several loops.
type atomicCounter struct {
	mu sync.Mutex
	n  int
}

func (c *atomicCounter) add() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n
}

// A group snapshot has every loop's tasks under its index; ps and pstree
// name each loop.
func TestLoopGroup_SnapshotCoversEveryLoop(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	ready := make(chan int, 2)
	out := make(chan *GroupSnapshot, 1)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		//asynciovet:ignore unawaitedtask the worker is left waiting on purpose, for the snapshot; the test cancels it
		CreateTask(tk, func(ct *T) (int, error) {
			_, err := NewFuture[int](ct).Await(ct)
			return 0, err
		}, WithName("worker-"+string(rune('a'+i))))
		if err := Sleep(tk, 0); err != nil {
			return 0, err
		}
		ready <- i
		if i == 0 {
			//asynciovet:ignore blockingcall the other loop's main sends at once; this loop has nothing else to run
			<-ready
			//asynciovet:ignore blockingcall the other loop's main sends at once; this loop has nothing else to run
			<-ready
			s, err := Go(tk, func(context.Context) (*GroupSnapshot, error) {
				return g.SnapshotThreadsafe(5*time.Second, SnapshotOptions{}), nil
			})
			if err != nil {
				return 0, err
			}
			out <- s
			for _, l := range g.Loops() {
				_, _ = l.CallSoonThreadsafe(func() {
					for _, x := range AllTasks(l) {
						if strings.HasPrefix(x.Name(), "worker-") {
							x.Cancel()
						}
					}
				})
			}
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := <-out
	for i, ls := range s.Loops {
		found := false
		for _, ti := range ls.Tasks {
			found = found || ti.Name == "worker-"+string(rune('a'+i))
		}
		if ls.Index != i || ls.Name != g.Loop(i).Name() || !found {
			t.Errorf("loop %d: index %d name %q, its worker listed: %v", i, ls.Index, ls.Name, found)
		}
	}
	var b strings.Builder
	if err := s.WritePS(&b); err != nil || !strings.Contains(b.String(), "== loop 1 (loop 1):") || !strings.Contains(b.String(), "worker-b") {
		t.Errorf("WritePS: %v\n%s", err, b.String())
	}
	if len(s.Stats()) != 2 {
		t.Errorf("Stats: %v", s.Stats())
	}
}

// Close from inside the group would wait for itself: an error instead.
func TestLoopGroup_CloseFromInsideTheGroupIsAnError(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		if err := g.Close(); err == nil || !strings.Contains(err.Error(), "called from loop") {
			t.Errorf("Close from loop %d: %v", i, err)
		}
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for i, l := range g.Loops() {
		if !l.IsClosed() {
			t.Errorf("loop %d not closed", i)
		}
	}
}
