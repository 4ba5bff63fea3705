package asyncio

import (
	"syscall"
	"testing"
)

// WithLockOSThread: every step of every task of a loop runs on the loop's
// own OS thread, even across the waits of a ping-pong between the loops
// (each wait parks the loop's goroutine, which an unlocked goroutine
// resumes on whichever thread is free).
//
// A task still pending at Close is cancelled and run to its end on its
// loop's thread too (the runtime refuses to resume a coroutine created on
// a locked thread anywhere else: a Close on another goroutine was a fatal
// error).
func TestLoopGroup_LockOSThreadKeepsEachLoopOnItsThread(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithLockOSThread())
	qs := [2]*CrossQueue[int]{NewCrossQueue[int](1), NewCrossQueue[int](1)}
	var atClose [2]bool
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		tid := syscall.Gettid()
		//asynciovet:ignore unawaitedtask the task is left pending on purpose: Close must end it on its loop's thread
		CreateTask(tk, func(pt *T) (int, error) { // still pending at Close
			_, err := NewFuture[int](pt).Await(pt)
			atClose[i] = syscall.Gettid() == tid
			return 0, err
		})
		child := CreateTask(tk, func(ct *T) (bool, error) {
			for k := 0; k < 300; k++ {
				if syscall.Gettid() != tid {
					return false, nil
				}
				if err := qs[i].Put(ct, k); err != nil {
					return false, err
				}
			}
			return true, nil
		})
		same := true
		for k := 0; k < 300; k++ {
			if _, err := qs[1-i].Get(tk); err != nil {
				return 0, err
			}
			same = same && syscall.Gettid() == tid
		}
		childSame, err := child.Await(tk)
		if err != nil || !same || !childSame {
			return 0, errRemote
		}
		return tid, nil
	})
	if err != nil || vals[0] == vals[1] {
		t.Fatalf("RunEach = %v, %v (want two distinct threads, each task on its loop's)", vals, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if !atClose[0] || !atClose[1] {
		t.Errorf("tasks ended at Close on their loops' threads: %v", atClose)
	}
}
