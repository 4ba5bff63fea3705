package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// FuzzScenario runs mutated scenarios (the seed corpus is the shared
// conformance cases and ours) through the validator and the interpreter
// in-process: a scenario the validator accepts must run to its closing
// lines with no panic anywhere (the interpreter's, the library's, a task's
// or a callback's: run reports those as errors) and no other interpreter
// error, and closing the loop must unwind every task left (goleak in
// TestMain checks their goroutines ended). A scenario has no loops, so
// a run that takes more than 100,000 loop iterations is a livelock.
func FuzzScenario(f *testing.F) {
	f.Add([]byte(`{"main": [["log", "hi"], ["sleep", 10], ["return", 1]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8<<10 { // keep each run short
			return
		}
		var sc scenario
		if json.Unmarshal(data, &sc) != nil || validate(&sc) != nil {
			return
		}
		// A hang is a finding too: the watchdog crashes the worker, which
		// makes the fuzzer keep the input (a failing test cannot end a
		// goroutine stuck in the loop). It bounds the run; it times nothing.
		dog := time.AfterFunc(20*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("scenario still running after 20 s: %s\n%s", data, buf[:runtime.Stack(buf, true)]))
		})
		defer dog.Stop()
		var out bytes.Buffer
		r := newRun(&sc, bufio.NewWriter(&out))
		r.maxIterations = 100000
		err := r.run()
		if cerr := r.loop.Close(); cerr != nil {
			t.Fatalf("Close: %v", cerr)
		}
		if err != nil {
			r.out.Flush()
			t.Fatalf("a valid scenario failed: %v\nscenario: %s\ntrace so far:\n%s", err, data, out.String())
		}
	})
}
