package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFanout runs the example on virtual time and checks each behaviour
// against figures computed here from the latency table.
func TestFanout(t *testing.T) {
	const n, limit, timeout = 50, 5, 60 * time.Millisecond
	ok, sum := 0, 0
	for i := range n {
		if latency(i) < timeout {
			ok++
			sum += i * i
		}
	}
	var b strings.Builder
	out = &b
	defer func() { out = nil }()
	if err := run(n, limit, timeout, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines: %q", len(lines), lines)
	}
	wantPrefix := fmt.Sprintf("fan-out: %d requests, limit %d (max in flight %d), timeout %v: %d ok, %d timed out, sum %d,",
		n, limit, limit, timeout, ok, n-ok, sum)
	if !strings.HasPrefix(lines[0], wantPrefix) {
		t.Errorf("fan-out line\n got %q\nwant prefix %q", lines[0], wantPrefix)
	}
	// Replica 0 is down, replica 1 answers after latency(3)+40ms, replicas
	// 2 and 3 are cancelled.
	want := fmt.Sprintf("first success of 4 replicas: replica-1 won after %v; cancelled: [replica-2 replica-3]", latency(3)+40*time.Millisecond)
	if diff := cmp.Diff(want, lines[1]); diff != "" {
		t.Errorf("first-success line (-want +got):\n%s", diff)
	}
}

// TestFanoutCancellation cancels the fan-out at every moment one of its
// tasks waits (cancelcheck with AllTasks and CancelMain), then each request
// task at each of its own awaits (AllTasks): every run must end cancelled
// (or with the request's cancellation absorbed by the group), with the
// semaphore's units all given back, no task left and no goroutine leaked.
func TestFanoutCancellation(t *testing.T) {
	var b strings.Builder
	out = &b
	defer func() { out = nil }()
	fan := func(t *asyncio.T, w *cancelcheck.Watch) error {
		sem := asyncio.NewSemaphore(3)
		w.Semaphore("limit", sem)
		return fanOut(t, sem, 8, 3, 60*time.Millisecond)
	}
	for _, opts := range [][]cancelcheck.Option{
		{cancelcheck.AllTasks(), cancelcheck.CancelMain()},
		{cancelcheck.AllTasks()},
	} {
		rep := cancelcheck.Require(t, fan, opts...)
		t.Logf("%s", rep)
	}
	rep := cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
		return firstSuccess(t, 3, 4)
	}, cancelcheck.AllTasks(), cancelcheck.CancelMain())
	t.Logf("%s", rep)
}
