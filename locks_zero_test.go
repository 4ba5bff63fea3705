package asyncio

import "testing"

// The zero Lock is an unlocked Lock, ready to use, as its doc says.
func TestLock_ZeroValueUsable(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var lk Lock
	tk := CreateTask(l, func(t *T) (int, error) {
		if lk.Locked() {
			return 0, runtimeErrorf("zero Lock is locked")
		}
		if err := lk.Acquire(t); err != nil {
			return 0, err
		}
		locked := lk.Locked()
		lk.Release()
		if !locked || lk.Locked() {
			return 0, runtimeErrorf("Acquire/Release on a zero Lock: locked %v then %v", locked, lk.Locked())
		}
		return 0, nil
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
}
