package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < len(cases); k++ {
		c := cases[k]
		name := strings.TrimSuffix(filepath.Base(c), ".json")
		t.Run(name, func(t *testing.T) {
			trace := strings.TrimSuffix(c, ".json") + ".trace"
			if o := filepath.Join("..", "overrides", name+".trace"); fileExists(o) {
				trace = o
			}
			want, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, self)
			cmd.Env = append(os.Environ(), groupChildEnv+"="+c, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("interpreter failed: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
			}
			if diff := cmp.Diff(lines(string(want)), lines(stdout.String())); diff != "" {
				t.Errorf("trace differs from the CPython reference (-want +got):\n%s", diff)
			}
		})
	}
}
