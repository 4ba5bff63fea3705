//go:build unix

package main

import "testing"

// One op = one child (bounded group vs TaskGroup + Semaphore) or one
// waiter served (limiter).
func BenchmarkBoundedGroup(b *testing.B)       { benchWorkload(b, "bounded-group") }
func BenchmarkTaskGroupSemaphore(b *testing.B) { benchWorkload(b, "taskgroup-semaphore") }
func BenchmarkLimiterWaiters(b *testing.B)     { benchWorkload(b, "limiter-waiters") }

// The toolkit workloads validate themselves (limit respected, one wakeup
// per grant) at a small n.
func TestToolkitWorkloads(t *testing.T) {
	for _, w := range []string{"bounded-group", "taskgroup-semaphore", "limiter-waiters"} {
		r, err := workloads[w](1000)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		if w == "limiter-waiters" && r["wakeups_per_grant"] != 1.0 {
			t.Errorf("%s: %v wakeups per grant", w, r["wakeups_per_grant"])
		}
	}
}
