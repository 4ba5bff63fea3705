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
	"go.uber.org/goleak"
)

// childEnv, when set, makes the test binary act as the interpreter for the
// case it names. Every case runs in its own process, like check.sh does:
// leftover tasks of a finished scenario stay parked (DSL.md section 5), so
// running them in-process would leak their goroutines.
const childEnv = "ASYNCIO_CONFORMANCE_CASE"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if err := runFile(path, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "scenario:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// sharedDir is $ASYNCIO_SHARED, else ../shared next to the repository root.
func sharedDir(t *testing.T) string {
	if d := os.Getenv("ASYNCIO_SHARED"); d != "" {
		return d
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(root), "shared")
}

// TestConformanceCases runs every hand-written scenario of the shared
// corpus and compares the trace with the CPython reference trace.
func TestConformanceCases(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "conformance", "cases")
	cases, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no conformance cases in %s: set ASYNCIO_SHARED to the shared directory (holding conformance/cases)", dir)
	}
	// Plus our own cases found by random testing (traces from the reference).
	extra, err := filepath.Glob(filepath.Join("..", "cases", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, extra...)
	sort.Strings(cases)
	checkCasesInChild(t, cases, childEnv)
}

// checkCasesInChild replays each case in a child process of this test
// binary (env names the case file for the child's init) and compares its
// trace with the CPython reference, or with the override in ../overrides.
func checkCasesInChild(t *testing.T, cases []string, env string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".json")
		t.Run(name, func(t *testing.T) {
			trace := strings.TrimSuffix(c, ".json") + ".trace"
			// A shared case whose recorded trace is not CPython's has the
			// one CPython gives in ../overrides (see the README there).
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
			// GORACE: a -race child would otherwise sleep 1 s at exit.
			cmd.Env = append(os.Environ(), env+"="+c, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func lines(s string) []string { return strings.SplitAfter(s, "\n") }
