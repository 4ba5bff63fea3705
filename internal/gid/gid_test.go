package gid

import (
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
