package asyncio

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// CrossQueue (crossqueue.go).

// A producer on loop 0 and a consumer on loop 1: every item arrives, in
// order, and the producer never gets more than Cap items ahead.
func TestCrossQueue_PipelineAcrossLoopsIsFIFOWithBackpressure(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	q := NewCrossQueue[int](3)
	const n = 2000
	maxLen := 0
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		if i == 0 {
			for k := 0; k < n; k++ {
				if err := q.Put(tk, k); err != nil {
					return 0, err
				}
				if l := q.Len(); l > maxLen {
					maxLen = l
				}
			}
			q.Shutdown(false)
			return 0, nil
		}
		next := 0
		for {
			v, err := q.Get(tk)
			if errors.Is(err, ErrQueueShutDown) {
				return next, nil
			}
			if err != nil {
				return 0, err
			}
			if v != next {
				return 0, errors.New("out of order")
			}
			next++
		}
	})
	if err != nil || vals[1] != n || maxLen > q.Cap() {
		t.Fatalf("consumer got %v items, err %v, max length %d (cap %d)", vals, err, maxLen, q.Cap())
	}
}

func TestCrossQueue_NowaitAndBadInput(t *testing.T) {
	mustPanic(t, "capacity 0", func() { NewCrossQueue[int](0) })
	q := NewCrossQueue[string](1)
	if _, err := q.GetNowait(); !errors.Is(err, ErrQueueEmpty) {
		t.Errorf("GetNowait on empty: %v", err)
	}
	if err := q.PutNowait("a"); err != nil {
		t.Errorf("PutNowait: %v", err)
	}
	if err := q.PutNowait("b"); !errors.Is(err, ErrQueueFull) {
		t.Errorf("PutNowait on full: %v", err)
	}
	q.Shutdown(false)
	if err := q.PutNowait("c"); !errors.Is(err, ErrQueueShutDown) {
		t.Errorf("PutNowait after Shutdown: %v", err)
	}
	if v, err := q.GetNowait(); v != "a" || err != nil {
		t.Errorf("GetNowait after Shutdown with an item: %q, %v", v, err)
	}
	if _, err := q.GetNowait(); !errors.Is(err, ErrQueueShutDown) {
		t.Errorf("GetNowait after Shutdown, empty: %v", err)
	}
}

// The ring grows as items arrive (wrapped around or not), keeps them in
// FIFO order, and stops at the capacity.
func TestCrossQueue_RingGrowsInOrderUpToTheCapacity(t *testing.T) {
	q := NewCrossQueue[int](50)
	next, want := 0, 0
	put := func(n int) {
		for range n {
			if err := q.PutNowait(next); err != nil {
				t.Fatalf("PutNowait(%d) with %d queued: %v", next, q.Len(), err)
			}
			next++
		}
	}
	get := func(n int) {
		for range n {
			if v, err := q.GetNowait(); v != want || err != nil {
				t.Fatalf("GetNowait: %d, %v; want %d", v, err, want)
			}
			want++
		}
	}
	put(10)
	get(7)  // the ring's head moves past its start
	put(40) // grows twice with the items wrapped around
	if q.Len() != 43 || q.Cap() != 50 {
		t.Fatalf("Len %d Cap %d; want 43, 50", q.Len(), q.Cap())
	}
	put(7)
	if err := q.PutNowait(-1); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("PutNowait at the capacity: %v", err)
	}
	get(50)
	huge := NewCrossQueue[int](math.MaxInt)
	if err := huge.PutNowait(1); err != nil || huge.Cap() != math.MaxInt {
		t.Fatalf("a queue of capacity math.MaxInt: PutNowait %v, Cap %d", err, huge.Cap())
	}
}

// Shutdown wakes every waiter: a waiting Put fails (its item is not put),
// a waiting Get fails; immediate discards what is left.
func TestCrossQueue_ShutdownWakesWaitersAndImmediateDiscards(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	full, empty := NewCrossQueue[int](1), NewCrossQueue[int](1)
	_ = full.PutNowait(1)
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		b := g.Loop(1)
		up, signal := started(tk)
		putErr, err := SubmitTo(tk, b, func(rt *T) (error, error) {
			_, _ = rt.Loop().CallSoonThreadsafe(signal) // after the Put below waits
			return full.Put(rt, 2), nil
		})
		if err != nil {
			return struct{}{}, err
		}
		getter := CreateTask(tk, func(ct *T) (int, error) { return empty.Get(ct) })
		if _, err := up.Await(tk); err != nil {
			return struct{}{}, err
		}
		if err := Sleep(tk, 0); err != nil { // the getter waits
			return struct{}{}, err
		}
		full.Shutdown(true)
		empty.Shutdown(false)
		if perr, err := putErr.Await(tk); err != nil || !errors.Is(perr, ErrQueueShutDown) {
			t.Errorf("waiting Put after Shutdown: %v, %v", perr, err)
		}
		if _, err := getter.Await(tk); !errors.Is(err, ErrQueueShutDown) {
			t.Errorf("waiting Get after Shutdown: %v", err)
		}
		if full.Len() != 0 {
			t.Errorf("immediate Shutdown left %d items", full.Len())
		}
		if err := full.Put(tk, 3); !errors.Is(err, ErrQueueShutDown) {
			t.Errorf("Put after Shutdown: %v", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A waiting Get that is cancelled leaves the queue: the next item goes to
// the next getter, none is lost.
func TestCrossQueue_CancelledGetterLosesNoItem(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		q := NewCrossQueue[int](1)
		first := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		second := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		if err := Sleep(tk, 0); err != nil { // both wait
			return struct{}{}, err
		}
		first.Cancel("no longer")
		if err := q.PutNowait(9); err != nil {
			return struct{}{}, err
		}
		if _, err := first.Await(tk); describe(err) != `CancelledError("no longer")` {
			t.Errorf("cancelled getter: %s", describe(err))
		}
		if v, err := second.Await(tk); v != 9 || err != nil {
			t.Errorf("second getter: %d, %v", v, err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A getter cancelled after it was woken for an item, before it resumed,
// gets the cancellation and the item stays first in the queue, as with
// asyncio.Queue (the item moves only when the getter runs): a task that
// returns straight after Get no longer takes the item with it.
func TestCrossQueue_GetterCancelledAfterWakeupLeavesTheItem(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		q := NewCrossQueue[int](1)
		getter := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		second := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		if err := Sleep(tk, 0); err != nil { // both wait
			return struct{}{}, err
		}
		_ = q.PutNowait(4) // promised to the first getter: its wakeup is queued
		if err := q.PutNowait(5); !errors.Is(err, ErrQueueFull) {
			t.Errorf("PutNowait while the item waits for its getter: %v, want ErrQueueFull (qsize 1 of 1)", err)
		}
		getter.Cancel("late")
		if v, err := getter.Await(tk); describe(err) != `CancelledError("late")` {
			t.Errorf("getter cancelled after its wakeup: %d, %s", v, describe(err))
		}
		if v, err := second.Await(tk); v != 4 || err != nil {
			t.Errorf("next getter: %d, %v (want the item the cancelled one left)", v, err)
		}
		if q.Len() != 0 {
			t.Errorf("Len %d after the item was taken", q.Len())
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A putter cancelled after it was woken for a slot, before it resumed,
// gets the cancellation and its item is not put; the slot goes to the
// next putter.
func TestCrossQueue_PutterCancelledAfterWakeupPutsNothing(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		q := NewCrossQueue[int](1)
		_ = q.PutNowait(1)
		first := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Put(ct, 2) })
		second := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Put(ct, 3) })
		if err := Sleep(tk, 0); err != nil { // both wait
			return struct{}{}, err
		}
		if v, err := q.GetNowait(); v != 1 || err != nil { // the slot is promised to first
			t.Errorf("GetNowait: %d, %v", v, err)
		}
		first.Cancel("late")
		if _, err := first.Await(tk); describe(err) != `CancelledError("late")` {
			t.Errorf("putter cancelled after its wakeup: %s", describe(err))
		}
		if _, err := second.Await(tk); err != nil {
			t.Errorf("next putter: %v", err)
		}
		if v, err := q.GetNowait(); v != 3 || err != nil {
			t.Errorf("queue holds %d, %v; want only the second putter's 3", v, err)
		}
		if n := q.Len(); n != 0 {
			t.Errorf("Len %d: the cancelled putter's item went in", n)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Shutdown and a getter woken before it: without immediate it still gets
// its item (asyncio's woken getter finds the queue non-empty); immediate
// discards the item and the getter gets ErrQueueShutDown.
func TestCrossQueue_ShutdownAfterAGetterWasWoken(t *testing.T) {
	for _, immediate := range []bool{false, true} {
		_, err := Run(func(tk *T) (struct{}, error) {
			q := NewCrossQueue[int](1)
			getter := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
			if err := Sleep(tk, 0); err != nil {
				return struct{}{}, err
			}
			_ = q.PutNowait(7)
			q.Shutdown(immediate)
			v, err := getter.Await(tk)
			if immediate && !errors.Is(err, ErrQueueShutDown) || !immediate && (v != 7 || err != nil) {
				t.Errorf("immediate=%v: woken getter got %d, %v", immediate, v, err)
			}
			if q.Len() != 0 {
				t.Errorf("immediate=%v: Len %d", immediate, q.Len())
			}
			return struct{}{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A loop that closes with a getter woken for an item but not resumed: the
// item stays in the queue (it never left it), even when the queue is full.
func TestCrossQueue_ItemPromisedToAClosingLoopStaysInTheQueue(t *testing.T) {
	q := NewCrossQueue[int](1)
	l := loopWithAWaitingGetter(t, q)
	if err := q.PutNowait(1); err != nil { // promised to l's getter
		t.Fatal(err)
	}
	mustClose(t, l)
	if v, err := q.GetNowait(); v != 1 || err != nil {
		t.Errorf("item promised to the closed loop's getter: %d, %v", v, err)
	}
}

// Producers and consumers on two loops, each Put and Get in its own task,
// a third of them cancelled at a random point: every item whose Put
// succeeded is received exactly once, and no other item is.
func TestCrossQueue_RandomCancellationsLoseAndDoubleNothing(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	q := NewCrossQueue[int](2)
	const n = 600
	put := make([]bool, n)
	var got []int
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		if i == 0 {
			for k := range n {
				p := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Put(ct, k) })
				if rng.IntN(3) == 0 {
					if err := Sleep(tk, 0); err != nil {
						return 0, err
					}
					p.Cancel()
				}
				if _, err := p.Await(tk); err == nil {
					put[k] = true
				} else if !IsCancelled(err) {
					return 0, err
				}
			}
			q.Shutdown(false)
			return 0, nil
		}
		for {
			c := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
			if rng.IntN(3) == 0 {
				for j := rng.IntN(3); j > 0; j-- {
					if err := Sleep(tk, 0); err != nil {
						return 0, err
					}
				}
				c.Cancel()
			}
			v, err := c.Await(tk)
			switch {
			case err == nil:
				got = append(got, v)
			case errors.Is(err, ErrQueueShutDown):
				return 0, nil
			case !IsCancelled(err):
				return 0, err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, n)
	for _, v := range got {
		seen[v]++
	}
	for k := range n {
		if want := map[bool]int{true: 1, false: 0}[put[k]]; seen[k] != want {
			t.Errorf("item %d: Put succeeded %v, received %d times", k, put[k], seen[k])
		}
	}
}

// A loop that closes with a task waiting in Get: the waiter leaves the
// queue, so a later Put is not lost on it.
func TestCrossQueue_WaiterOfAClosedLoopLeavesTheQueue(t *testing.T) {
	q := NewCrossQueue[int](1)
	l := loopWithAWaitingGetter(t, q)
	mustClose(t, l)
	if err := q.PutNowait(1); err != nil {
		t.Fatal(err)
	}
	if v, err := q.GetNowait(); v != 1 || err != nil {
		t.Errorf("item after the waiter's loop closed: %d, %v", v, err)
	}
}

// After Shutdown(false) a Get finds an item promised to a woken getter
// still in the queue: it waits for it instead of reporting the queue shut
// down, and gets it when that getter is cancelled before it resumed (the
// item was stranded: every consumer was told the queue was done).
func TestCrossQueue_ShutdownLeavesPromisedItemsToTheNextGetter(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		q := NewCrossQueue[int](4)
		first := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		_ = q.PutNowait(42) // promised to first
		q.Shutdown(false)
		second := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		third := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
		if err := Sleep(tk, 0); err != nil { // both wait: the item left is promised
			return struct{}{}, err
		}
		first.Cancel()
		if _, err := first.Await(tk); !IsCancelled(err) {
			t.Errorf("first: %v", err)
		}
		if v, err := second.Await(tk); v != 42 || err != nil {
			t.Errorf("second getter after Shutdown: %d, %v; want the item left", v, err)
		}
		if _, err := third.Await(tk); !errors.Is(err, ErrQueueShutDown) {
			t.Errorf("third getter once the queue is drained: %v", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// loopWithAWaitingGetter returns a new loop, stopped, with a task waiting
// in q.Get, left pending on purpose: the tests close the loop under it.
func loopWithAWaitingGetter(t *testing.T, q *CrossQueue[int]) *Loop {
	t.Helper()
	l := NewLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	//asynciovet:ignore unawaitedtask the task is left pending on purpose: the loop closes while it waits or after its wakeup was queued
	CreateTask(l, func(ct *T) (int, error) { return q.Get(ct) })
	l.CallSoon(l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	return l
}
