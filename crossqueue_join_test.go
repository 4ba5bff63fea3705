package asyncio

import (
	"errors"
	"sync/atomic"
	"testing"
)

// CrossQueue.TaskDone and CrossQueue.Join (crossqueue.go), asyncio's
// task_done and join across loops.

// joinersListed is the number of tasks q lists as waiting in Join.
func joinersListed[V any](q *CrossQueue[V]) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.joiners)
}

// A producer on loop 0 and a consumer on loop 1, which holds back its
// last TaskDone until told: a Join on loop 0 waits through the other
// TaskDones and returns once the last one is made, not before.
func TestCrossQueue_JoinReturnsWhenTheLastTaskIsDone(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	const n = 20
	q := NewCrossQueue[int](2)
	// Explicit signals between the loops: parked (the consumer got every
	// item and made every TaskDone but the last) and release (make it).
	parked, release := NewCrossQueue[struct{}](1), NewCrossQueue[struct{}](1)
	var done atomic.Int64
	_, err := RunGroup(g, func(tk *T) (struct{}, error) {
		consumer, err := SubmitTo(tk, g.Loop(1), func(rt *T) (struct{}, error) {
			for k := range n {
				if _, err := q.Get(rt); err != nil {
					return struct{}{}, err
				}
				if k == n-1 {
					if err := parked.PutNowait(struct{}{}); err != nil {
						return struct{}{}, err
					}
					if _, err := release.Get(rt); err != nil {
						return struct{}{}, err
					}
				}
				done.Add(1)
				if err := q.TaskDone(); err != nil {
					return struct{}{}, err
				}
			}
			return struct{}{}, nil
		})
		if err != nil {
			return struct{}{}, err
		}
		for k := range n {
			if err := q.Put(tk, k); err != nil { // waits while the queue is full
				return struct{}{}, err
			}
		}
		joiner := CreateTask(tk, func(ct *T) (int64, error) {
			err := q.Join(ct)
			return done.Load(), err
		})
		if _, err := parked.Get(tk); err != nil {
			return struct{}{}, err
		}
		if err := Sleep(tk, 0); err != nil { // the joiner runs if it was woken
			return struct{}{}, err
		}
		if joiner.Done() || joinersListed(q) != 1 {
			t.Errorf("Join with one item not done: done %v, joiners listed %d; want it waiting", joiner.Done(), joinersListed(q))
		}
		if err := release.PutNowait(struct{}{}); err != nil {
			return struct{}{}, err
		}
		if seen, err := joiner.Await(tk); err != nil || seen != n {
			t.Errorf("Join returned %v after %d TaskDones; want nil after all %d", err, seen, n)
		}
		if _, err := consumer.Await(tk); err != nil {
			return struct{}{}, err
		}
		if err := q.Join(tk); err != nil { // nothing unfinished: at once
			t.Errorf("Join with nothing unfinished: %v", err)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TaskDone called more times than items were put: a *ValueError with
// asyncio's message, and no change (the count does not go below 0, so a
// later item still needs its own TaskDone). TaskDone and Join on a queue
// not made by NewCrossQueue panic with a *ValueError.
func TestCrossQueue_TaskDoneTooManyTimes(t *testing.T) {
	q := NewCrossQueue[int](2)
	tooMany := func(when string) {
		t.Helper()
		var ve *ValueError
		if err := q.TaskDone(); !errors.As(err, &ve) || ve.Msg != "task_done() called too many times" {
			t.Errorf("TaskDone %s: %v; want *ValueError %q", when, err, "task_done() called too many times")
		}
	}
	tooMany("on a new queue")
	if err := q.PutNowait(1); err != nil {
		t.Fatal(err)
	}
	if _, err := q.GetNowait(); err != nil {
		t.Fatal(err)
	}
	if err := q.TaskDone(); err != nil {
		t.Errorf("TaskDone for the item: %v", err)
	}
	tooMany("once more")
	if err := q.PutNowait(2); err != nil {
		t.Fatal(err)
	}
	if err := q.TaskDone(); err != nil {
		t.Errorf("TaskDone for an item put after the refused ones: %v (they changed the count)", err)
	}
	tooMany("after the second item's")
	mustPanic(t, "TaskDone on the zero CrossQueue", func() { _ = new(CrossQueue[int]).TaskDone() })
	_, err := Run(func(tk *T) (struct{}, error) {
		//asynciovet:ignore droppedcancel the call panics on its nil queue before it can suspend; the panic is what the test checks
		mustPanic(t, "Join on a nil CrossQueue", func() { _ = (*CrossQueue[int])(nil).Join(tk) })
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A cancelled Join leaves nothing behind: one cancelled while it waits
// leaves the queue's list of joiners and its loop's outside work; one
// cancelled after TaskDone woke it, before it resumed, gets the
// cancellation (as asyncio's await of a completed future does), and
// neither keeps anything listed.
func TestCrossQueue_CancelledJoinLeavesNothingBehind(t *testing.T) {
	_, err := Run(func(tk *T) (struct{}, error) {
		l := tk.Loop()
		q := NewCrossQueue[int](1)
		if err := q.PutNowait(1); err != nil {
			return struct{}{}, err
		}
		before := l.external.Load()
		waiting := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Join(ct) })
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		if n := joinersListed(q); n != 1 {
			t.Fatalf("joiners listed: %d, want the waiting one", n)
		}
		awaits := "(not listed)"
		for _, ti := range Snapshot(tk, SnapshotOptions{}).Tasks {
			if ti.ID == taskID(waiting.T()) {
				awaits = ti.Awaits
			}
		}
		if awaits != "Queue.Join" {
			t.Errorf("a snapshot says the joiner awaits %s, want Queue.Join", awaits)
		}
		waiting.Cancel("stop")
		if _, err := waiting.Await(tk); describe(err) != `CancelledError("stop")` {
			t.Errorf("Join cancelled while waiting: %s", describe(err))
		}
		if n, ext := joinersListed(q), l.external.Load(); n != 0 || ext != before {
			t.Errorf("after the cancelled Join: %d joiners listed, outside work %d (want 0, %d)", n, ext, before)
		}
		woken := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Join(ct) })
		if err := Sleep(tk, 0); err != nil {
			return struct{}{}, err
		}
		if _, err := q.GetNowait(); err != nil {
			return struct{}{}, err
		}
		if err := q.TaskDone(); err != nil { // wakes the joiner: its wakeup is queued
			return struct{}{}, err
		}
		woken.Cancel("late")
		if _, err := woken.Await(tk); describe(err) != `CancelledError("late")` {
			t.Errorf("Join cancelled after its wakeup: %s", describe(err))
		}
		if n, ext := joinersListed(q), l.external.Load(); n != 0 || ext != before {
			t.Errorf("after the late-cancelled Join: %d joiners listed, outside work %d (want 0, %d)", n, ext, before)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A loop that closes with a task in Join, waiting or woken but not
// resumed: the waiter leaves the queue, the caller awaiting the Join from
// outside gets an error wrapping ErrLoopClosed (as for the other waits on
// a closed loop), and a later TaskDone, which has no joiner left to
// wake, works.
func TestCrossQueue_JoinOfAClosingLoop(t *testing.T) {
	for _, woken := range []bool{false, true} {
		q := NewCrossQueue[int](1)
		if err := q.PutNowait(1); err != nil {
			t.Fatal(err)
		}
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		cf := RunCoroutineThreadsafe(l, func(ct *T) (struct{}, error) { return struct{}{}, q.Join(ct) })
		for k := 0; joinersListed(q) == 0; k++ {
			if k == 10 {
				t.Fatal("the Join never waited")
			}
			runOne(t, l)
		}
		if _, err := q.GetNowait(); err != nil {
			t.Fatal(err)
		}
		if woken {
			if err := q.TaskDone(); err != nil { // its wakeup is queued on l, which never runs it
				t.Fatal(err)
			}
		}
		mustClose(t, l)
		if _, err := cf.Result(); !errors.Is(err, ErrLoopClosed) {
			t.Errorf("woken %v: the Join's outcome: %v; want an error wrapping ErrLoopClosed", woken, err)
		}
		if n := joinersListed(q); n != 0 {
			t.Errorf("woken %v: %d joiners listed after their loop closed", woken, n)
		}
		if !woken {
			if err := q.TaskDone(); err != nil {
				t.Errorf("TaskDone after the joiner's loop closed: %v", err)
			}
		}
	}
}

// Shutdown(true) counts each item it discards as done: a Join on another
// loop returns when that leaves nothing unfinished, and goes on waiting
// while an item taken before is not done yet, until its TaskDone.
func TestCrossQueue_ImmediateShutdownReleasesJoiners(t *testing.T) {
	for _, taken := range []bool{false, true} {
		g := NewLoopGroup(WithLoops(2))
		_, err := RunGroup(g, func(tk *T) (struct{}, error) {
			q := NewCrossQueue[int](4)
			for k := range 3 {
				if err := q.PutNowait(k); err != nil {
					return struct{}{}, err
				}
			}
			if taken {
				if _, err := q.GetNowait(); err != nil { // taken, not done
					return struct{}{}, err
				}
			}
			joiner, err := SubmitTo(tk, g.Loop(1), func(rt *T) (struct{}, error) { return struct{}{}, q.Join(rt) })
			if err != nil {
				return struct{}{}, err
			}
			// A round trip to loop 1: the Join waits by its end.
			if _, err := CallOn(tk, g.Loop(1), func(*T) (struct{}, error) { return struct{}{}, nil }); err != nil {
				return struct{}{}, err
			}
			if n := joinersListed(q); n != 1 {
				t.Fatalf("taken %v: %d joiners listed, want 1", taken, n)
			}
			q.Shutdown(true)
			// A round trip to loop 1: a wakeup sent to the joiner before
			// it reached it, and the joiner's outcome came back before
			// this call's.
			if _, err := CallOn(tk, g.Loop(1), func(*T) (struct{}, error) { return struct{}{}, nil }); err != nil {
				return struct{}{}, err
			}
			if taken {
				if joiner.Done() {
					t.Errorf("Join returned with the taken item not done (%v)", joiner.Err())
				}
				if err := q.TaskDone(); err != nil {
					return struct{}{}, err
				}
				if _, err := CallOn(tk, g.Loop(1), func(*T) (struct{}, error) { return struct{}{}, nil }); err != nil {
					return struct{}{}, err
				}
			}
			if !joiner.Done() {
				t.Errorf("taken %v: Join still waits with nothing unfinished", taken)
				joiner.Cancel()
			}
			if _, err := joiner.Await(tk); err != nil && !IsCancelled(err) {
				t.Errorf("taken %v: Join after Shutdown(true): %v", taken, err)
			}
			if err := q.TaskDone(); err == nil {
				t.Errorf("taken %v: TaskDone after every item was counted done: nil, want a *ValueError", taken)
			}
			return struct{}{}, nil
		})
		if cerr := g.Close(); cerr != nil {
			t.Errorf("group Close: %v", cerr)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
