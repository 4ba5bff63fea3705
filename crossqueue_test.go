package asyncio

import (
	"errors"
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

// A getter cancelled after an item was handed to it (the item is on its
// way through its loop) returns the item, and the cancellation comes at
// its next await.
func TestCrossQueue_CancelAfterHandoffKeepsTheItemAndDeliversLater(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		q := NewCrossQueue[int](1)
		var got int
		getter := CreateTask(tk, func(ct *T) (int, error) {
			v, err := q.Get(ct)
			if err != nil {
				return 0, err
			}
			got = v
			return v, Sleep(ct, 0)
		})
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		_ = q.PutNowait(4) // handed to the getter: its wake-up is queued
		getter.Cancel("late")
		_, err := getter.Await(tk)
		if got != 4 || describe(err) != `CancelledError("late")` {
			t.Errorf("got item %d, then %s", got, describe(err))
		}
		if q.Len() != 0 {
			t.Errorf("item left in the queue")
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A loop that closes with a task waiting in Get: the waiter leaves the
// queue, so a later Put is not lost on it.
func TestCrossQueue_WaiterOfAClosedLoopLeavesTheQueue(t *testing.T) {
	q := NewCrossQueue[int](1)
	l := NewLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	//asynciovet:ignore unawaitedtask the task is left pending on purpose: the loop closes while it waits
	CreateTask(l, func(ct *T) (int, error) { return q.Get(ct) })
	l.CallSoon(l.Stop)
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	if err := q.PutNowait(1); err != nil {
		t.Fatal(err)
	}
	if v, err := q.GetNowait(); v != 1 || err != nil {
		t.Errorf("item after the waiter's loop closed: %d, %v", v, err)
	}
}
