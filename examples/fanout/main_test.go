//go:build unix

package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// On the virtual clock the counts hold by construction: every fifth
// request is answered after 3x the timeout, the others after 1 ms, and
// loopback I/O takes no loop time, so exactly the slow ones time out.
func TestHTTPFanOut(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 20, 4, 150*time.Millisecond, asyncio.WithVirtualTime()); err != nil {
		t.Fatal(err)
	}
	want := "fan-out: 20 requests, 16 ok, 4 timed out, in flight <= 4: true\n" +
		"first success: replica 2: response to /x; replica 0 failed, replica 1 cancelled\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestHTTPFanOutCancellation cancels the fan-out at every moment one of
// its tasks (client or server side) waits: every run must end cancelled
// with the semaphore's units given back, no task left and no goroutine
// leaked.
func TestHTTPFanOutCancellation(t *testing.T) {
	fn := func(t *asyncio.T, w *cancelcheck.Watch) error {
		sem := asyncio.NewSemaphore(2)
		w.Semaphore("limit", sem)
		return withServer(t, func(path string) time.Duration {
			if path == "/item/0" {
				return 450 * time.Millisecond
			}
			return time.Millisecond
		}, func(srv *server) error {
			return fanOut(t, io.Discard, srv.Addr().String(), sem, 4, 2, 150*time.Millisecond)
		})
	}
	cancelcheck.Require(t, fn, cancelcheck.AllTasks(), cancelcheck.CancelMain())
	// The replicas' race, where the loser is cancelled by the winner.
	cancelcheck.Require(t, func(t *asyncio.T, w *cancelcheck.Watch) error {
		return withServer(t, func(string) time.Duration { return 450 * time.Millisecond }, func(slow *server) error {
			return withServer(t, func(string) time.Duration { return 0 }, func(fast *server) error {
				return firstSuccess(t, io.Discard, []string{slow.Addr().String(), fast.Addr().String()})
			})
		})
	}, cancelcheck.AllTasks(), cancelcheck.CancelMain())
}
