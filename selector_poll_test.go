//go:build linux

package asyncio

import (
	"testing"
	"time"
)

// TestLOOP1_PollWithExpiredTimeoutReportsReadyFD: a poll whose timeout has
// already run out by the time it waits (a timer due in 1 ns) still reports
// the descriptors that are ready (LOOP-1: every iteration polls). The
// blocking wait goes through the runtime poller, whose deadline check
// comes before the first try.
func TestLOOP1_PollWithExpiredTimeoutReportsReadyFD(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	a, b := socketpair(t)
	if err := l.AddReader(a, func() {}); err != nil {
		t.Fatal(err)
	}
	write(t, b, "x")
	for i := 0; i < 100; i++ {
		events, err := l.sel.poll(time.Nanosecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].fd != a || !events[0].readable {
			t.Fatalf("poll %d: got %+v, want fd %d readable", i, events, a)
		}
	}
}
