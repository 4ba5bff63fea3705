//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
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
