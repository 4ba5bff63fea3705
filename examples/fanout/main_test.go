//go:build unix

package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The http.Client mode on a real clock. What the test checks holds by
// construction, however busy the machine: the never-answered requests
// always time out; the server sees every one of them that reached it go
// (it is shut down gracefully before counting); the others either succeed
// with their own body or, only if the machine stalls past the timeout,
// time out too; in flight never exceeds the limit; replica 2 is the only
// one that can answer, and only once replica 1 (which never answers) has
// the request, so replica 1 is always the cancelled loser and its server
// always sees the request go.
func TestHTTPClientFanOut(t *testing.T) {
	var out strings.Builder
	const n, limit = 40, 8
	if err := runClient(&out, n, limit, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var ok, timedOut, slowOut, slow, saw, arrived, lim int
	var bounded bool
	fanOut, race, _ := strings.Cut(out.String(), "\n")
	if _, err := fmt.Sscanf(fanOut, "fan-out: 40 requests, %d ok, %d timed out (%d of the %d never answered; the server saw %d of %d go), in flight <= %d: %t",
		&ok, &timedOut, &slowOut, &slow, &saw, &arrived, &lim, &bounded); err != nil {
		t.Fatalf("fan-out line %q: %v", fanOut, err)
	}
	if slow != n/5 || slowOut != slow || saw != arrived || arrived > slow || ok+timedOut != n || !bounded || lim != limit {
		t.Errorf("fan-out: %q", fanOut)
	}
	if race != "first success: replica 2: response to /x; replica 1 cancelled: true, its server saw the request go: true\n" {
		t.Errorf("race: %q", race)
	}
}

// The adapter mode on the virtual clock: the counts hold by construction,
// every fifth request is answered after 3x the timeout, the others after
// 1 ms, and loopback I/O takes no loop time, so exactly the slow ones time
// out.
func TestAdapterFanOut(t *testing.T) {
	var out strings.Builder
	if err := runAdapter(&out, 20, 4, 150*time.Millisecond, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
	want := "fan-out: 20 requests, 16 ok, 4 timed out, in flight <= 4: true\n" +
		"first success: replica 2: response to /x; replica 0 failed, replica 1 cancelled\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestAdapterFanOutCancellation cancels the adapter fan-out at every
// moment one of its tasks (client or server side) waits: every run must
// end cancelled with the semaphore's units given back, no task left and no
// goroutine leaked.
func TestAdapterFanOutCancellation(t *testing.T) {
	fn := func(t *asyncio.T, w *cancelcheck.Watch) error {
		sem := asyncio.NewSemaphore(2)
		w.Semaphore("limit", sem)
		return withServer(t, func(path string) time.Duration {
			if path == "/item/0" {
				return 450 * time.Millisecond
			}
			return time.Millisecond
		}, func(srv *loopServer) error {
			return fanOutAdapter(t, io.Discard, srv.Addr().String(), sem, 4, 2, 150*time.Millisecond)
		})
	}
	cancelcheck.Require(t, fn, cancelcheck.AllTasks(), cancelcheck.CancelMain())
	// The replicas' race, where the loser is cancelled by the winner.
	cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
		return withServer(t, func(string) time.Duration { return 450 * time.Millisecond }, func(slow *loopServer) error {
			return withServer(t, func(string) time.Duration { return 0 }, func(fast *loopServer) error {
				return firstSuccessAdapter(t, io.Discard, []string{slow.Addr().String(), fast.Addr().String()})
			})
		})
	}, cancelcheck.AllTasks(), cancelcheck.CancelMain())
}
