package asyncio

import (
	"errors"
	"testing"
)

// TestCancelTasksAwaitingEachOther: A awaits B and B awaits A (a
// deadlock, but one a program can build); cancelling A passes the request
// to B, whose waiter is A again. It used to recurse until the stack
// overflowed, killing the process (FuzzTaskGraph,
// testdata/fuzz/FuzzTaskGraph/regress-cancel-await-cycle); now the request
// stops where the cycle closes, as for a gather holding its own awaiter
// (GATHER-6): A counts the request twice (the second time keeps it as
// mustCancel), B once, and the loop reports the deadlock.
func TestCancelTasksAwaitingEachOther(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	var a, b *Task[int]
	a = CreateTask(l, func(t *T) (int, error) { return b.Await(t) })
	b = CreateTask(l, func(t *T) (int, error) {
		if err := Sleep(t, 0); err != nil { // let A start waiting first
			return 0, err
		}
		return a.Await(t)
	})
	l.CallLater(1, func() {
		if !a.Cancel() {
			t.Errorf("Cancel of a waiting task returned false")
		}
	})
	if err := l.RunForever(); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("RunForever: %v, want ErrDeadlock", err)
	}
	if a.Cancelling() != 2 || b.Cancelling() != 1 {
		t.Errorf("cancelling: a %d, b %d; want 2 and 1", a.Cancelling(), b.Cancelling())
	}
}
