package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
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

// runFileOnBusyGroup runs the scenario at path on loop 0 of a 3-loop group
// on virtual time while loops 1 and 2 hand items back and forth.
func runFileOnBusyGroup(path string) error {
	g := asyncio.NewLoopGroup(asyncio.WithLoops(3), asyncio.WithGroupLoopOptions(asyncio.WithVirtualTime()))
	q12, q21 := asyncio.NewCrossQueue[int](4), asyncio.NewCrossQueue[int](4)
	stop := make(chan struct{})
	var busy sync.WaitGroup
	rounds := make([]int, 3)
	for i := 1; i <= 2; i++ {
		l := g.Loop(i)
		busy.Add(1)
		go func() {
			defer busy.Done()
			task := asyncio.CreateTask(l, func(t *asyncio.T) (struct{}, error) {
				in, out := q21, q12
				if i == 2 {
					in, out = q12, q21
				}
				if i == 1 {
					_ = out.PutNowait(0)
				}
				for {
					if i == 1 {
						select {
						case <-stop:
							out.Shutdown(false)
						default:
						}
					}
					v, err := in.Get(t)
					if errors.Is(err, asyncio.ErrQueueShutDown) {
						out.Shutdown(false)
						return struct{}{}, nil
					}
					if err != nil {
						return struct{}{}, err
					}
					rounds[i]++
					if err := asyncio.Sleep(t, 0); err != nil {
						return struct{}{}, err
					}
					if err := out.Put(t, v+1); err != nil && !errors.Is(err, asyncio.ErrQueueShutDown) {
						return struct{}{}, err
					}
				}
			})
			_ = l.RunUntilComplete(task)
		}()
	}
	newScenarioLoop = func() *asyncio.Loop { return g.Loop(0) }
	err := runFile(path, os.Stdout)
	close(stop)
	busy.Wait()
	if rounds[1] == 0 || rounds[2] == 0 {
		err = errors.Join(err, fmt.Errorf("the other loops were not busy: %v rounds", rounds))
	}
	return errors.Join(err, g.Close())
}

// TestConformanceCasesOnABusyGroup runs a handful of the shared cases
// (every fifth, in name order) on a busy group's loop 0.
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
	for k := 0; k < len(cases); k += 5 {
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
