package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Issue 18 item 7: a scenario runs on a loop that belongs to a LoopGroup
// while the group's other loops are busy (a ping-pong through two
// CrossQueues, with bare yields), and its trace is still CPython's.

const groupChildEnv = "ASYNCIO_CONFORMANCE_GROUP_CASE"

func init() {
	if path := os.Getenv(groupChildEnv); path != "" {
		// Not on the init goroutine: it is locked to the main thread, and
		// the loop's coroutines would be bound to it.
		errc := make(chan error)
		go func() { errc <- runFileOnBusyGroup(path) }()
		if err := <-errc; err != nil {
			fmt.Fprintln(os.Stderr, "scenario:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// TestConformanceCasesOnABusyGroup runs every shared case on a busy
// group's loop 0 (run.sh also runs the random scenarios that way).
func TestConformanceCasesOnABusyGroup(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "conformance", "cases")
	cases, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no conformance cases in %s (%v)", dir, err)
	}
	sort.Strings(cases)
	checkCasesInChild(t, cases, groupChildEnv)
}
