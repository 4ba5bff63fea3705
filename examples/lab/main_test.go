package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLab runs the lab on virtual time and checks every printed fact.
func TestLab(t *testing.T) {
	var b strings.Builder
	out = &b
	if err := run(true); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1. two sleeps of 1 unit: serial 2.0 units, concurrent 1.0 units",
		`2. cancelled worker: error "asyncio: cancelled: shutting down" (CancelledError: true), cleanup ran: true, Cancelled(): true`,
		`3. swallowed cancellation: result "finished anyway", error <nil>, Cancelled(): false, Cancelling(): 1`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(b.String()), "\n")); diff != "" {
		t.Errorf("lab output (-want +got):\n%s", diff)
	}
}
