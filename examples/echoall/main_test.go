//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Round robin is deterministic: 6 clients over 2 loops, 3 each.
func TestEchoAllRoundRobin(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 2, "roundrobin", 6, false, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "loop 0 served 3\nloop 1 served 3\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Reuse port: the kernel chooses; every client is served.
func TestEchoAllReusePort(t *testing.T) {
	var out strings.Builder
	if err := run(&out, 2, "reuseport", 8, false, 0); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var loop, n int
		if _, err := fmt.Sscanf(line, "loop %d served %d", &loop, &n); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		total += n
	}
	if total != 8 {
		t.Fatalf("%d clients served, want 8 (%q)", total, out.String())
	}
}
