package gid

import (
	"runtime"
	"sync"
	"testing"
)

// Token tells goroutines apart, and is stable within one goroutine.
func TestTokenDistinguishesLiveGoroutines(t *testing.T) {
	const n = 64
	tokens := make([]uint64, n)
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			tokens[i] = Token()
			if Token() != tokens[i] {
				t.Errorf("goroutine %d: token changed", i)
			}
			ready.Done()
			release.Wait() // stay alive until every token is taken
		}()
	}
	ready.Wait()
	release.Done()
	done.Wait()
	seen := map[uint64]bool{Token(): true}
	for i, tok := range tokens {
		if seen[tok] {
			t.Fatalf("goroutine %d: token %#x not unique among live goroutines", i, tok)
		}
		seen[tok] = true
	}
}

// Current parses the id runtime.Stack prints.
func TestCurrentIsNonZeroAndStable(t *testing.T) {
	a, b := Current(), Current()
	if a == 0 || a != b {
		t.Fatalf("Current() = %d then %d", a, b)
	}
}

func BenchmarkToken(b *testing.B) {
	for b.Loop() {
		Token()
	}
}

func BenchmarkCurrent(b *testing.B) {
	for b.Loop() {
		Current()
	}
}

func TestLockedFollowsLockOSThread(t *testing.T) {
	done := make(chan [3]bool)
	go func() {
		var got [3]bool
		got[0] = Locked()
		runtime.LockOSThread()
		got[1] = Locked()
		runtime.UnlockOSThread()
		got[2] = Locked()
		done <- got
	}()
	if got := <-done; got != [3]bool{false, true, false} {
		t.Errorf("Locked before, while and after LockOSThread = %v, want [false true false]", got)
	}
}

func BenchmarkLocked(b *testing.B) {
	for range b.N {
		Locked()
	}
}
