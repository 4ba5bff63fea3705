package asyncio

import (
	"syscall"
	"testing"
)

// WithLockOSThread: every step of every task of a loop runs on the loop's
// own OS thread, even across the waits of a ping-pong between the loops
// (each wait parks the loop's goroutine, which an unlocked goroutine
// resumes on whichever thread is free).
func TestLoopGroup_LockOSThreadKeepsEachLoopOnItsThread(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithLockOSThread())
	defer g.Close()
	qs := [2]*CrossQueue[int]{NewCrossQueue[int](1), NewCrossQueue[int](1)}
	vals, err := RunEach(g, func(tk *T, i int) (int, error) {
		tid := syscall.Gettid()
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
}
