//go:build unix

// Command bench runs the peer workloads W1–W10 of ../shared/bench/WORKLOADS.md
// with go-asyncio, so that the shared driver (run-peers.sh, PROJECT_BIN)
// can put its numbers in one table beside asyncio, uvloop and raw Go.
//
//	bench -w W1|W2|W3|W4|W5|W6|W7|W7f|W10 [-n N] [-trace file]
//	bench -w echo-server -variant streams|protocol -size S   (W8: prints PORT n, serves until SIGTERM)
//	bench -w fanout-client -port P -n N -limit 100           (W9)
//	bench -w http-client -variant bridge|bridge-workers|raw -port P -n N -limit 100
//	                                       (net/http's client through asyncio.Go, or raw goroutines)
//	bench -w scale-tasks|scale-timers|scale-conns [-n N]      (scaling curves: one line per size)
//
// Each in-process run prints one JSON line in the peers' schema with
// "impl":"go-asyncio" and exits 0; a failed validation exits 1.
//
// The command is built on Unix only (every file has //go:build unix): it
// drives sockets through package aio, which is Unix-only, and measures
// with getrusage and /proc. On Windows the package is empty, so that
// "go build ./..." of the module still succeeds there.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultN is the N of WORKLOADS.md ("N used (nothing reduced)").
var defaultN = map[string]int{
	"W1": 1_000_000, "W2": 1_000_000, "W3": 500_000, "W4": 100_000, "W5": 200_000,
	"W6": 100_000, "W7": 100_000, "W7f": 100_000, "W10": 100_000,
}

// rec is one JSON line.
type rec map[string]any

// workloads maps -w to the workload; each returns its record or an error
// when its own validation fails.
var workloads = map[string]func(n int) (rec, error){
	"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6,
	"W7": w7, "W7f": w7f, "W10": w10,
}

func main() {
	w := flag.String("w", "", "workload: W1..W7, W7f, W10, echo-server, fanout-client, http-client, scale-tasks, scale-timers, scale-conns")
	n := flag.Int("n", 0, "operation count (0: the N of WORKLOADS.md)")
	variant := flag.String("variant", "", "W8 server variant: streams|protocol; http-client: bridge|bridge-workers|raw")
	size := flag.Int("size", 64, "W8 message size in bytes")
	port := flag.Int("port", 0, "W9/http-client server port on 127.0.0.1")
	limit := flag.Int("limit", 100, "W9/http-client concurrency limit")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := flag.String("trace", "", "run under runtime/trace, writing the trace to this file (the cost of tracing)")
	runs := flag.Int("runs", 1, "in-process workloads: run this many times in one process, one line each with \"run\" and \"minor_faults\" (when > 1)")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the run (every allocation sampled: slower) to this file")
	flag.Parse()
	if *memProfile != "" {
		runtime.MemProfileRate = 1
		defer writeMemProfile(*memProfile)
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(2)
		}
		defer f.Close()
		defer trace.Stop()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(2)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	switch *w {
	case "echo-server": // W8: serve until SIGTERM
		stop := make(chan struct{})
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		go func() { <-sig; close(stop) }()
		serve := func() error { return echoServer(*variant, *size, os.Stdout, stop) }
		if *loopsFlag > 1 { // W8 on a LoopGroup (group.go)
			serve = func() error { return groupEchoServer(*variant, *size, *loopsFlag, *groupModeFlag, os.Stdout, stop) }
		}
		if err := serve(); err != nil {
			fmt.Fprintf(os.Stderr, "bench: echo-server: %v\n", err)
			os.Exit(1)
		}
		return
	case "scale-tasks", "scale-timers", "scale-conns":
		if err := runScale(*w, *n, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", *w, err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		return
	case "scale-conns-client": // the child of scale-conns
		if err := scaleConnsClient(*port, *n); err != nil {
			fmt.Fprintf(os.Stderr, "bench: scale-conns-client: %v\n", err)
			os.Exit(1)
		}
		return
	case "fanout-client": // W9
		if *n <= 0 {
			*n = 10_000
		}
		workloads["fanout-client"] = func(n int) (rec, error) { return fanoutClient(*port, n, *limit) }
	case "http-client":
		if *n <= 0 {
			*n = 10_000
		}
		workloads["http-client"] = func(n int) (rec, error) { return httpClient(*variant, *port, n, *limit) }
	}
	fn, ok := workloads[*w]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: unknown workload -w %q\n", *w)
		os.Exit(2)
	}
	if *n <= 0 {
		*n = defaultN[*w]
	}
	if *runs < 1 {
		fmt.Fprintf(os.Stderr, "bench: -runs %d: want at least 1\n", *runs)
		os.Exit(2)
	}
	for i := range *runs {
		faults := minorFaults()
		r, err := fn(*n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: validation failed: %v\n", *w, err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		if *runs > 1 {
			// The first run pays for memory touched for the first time
			// (W4's goroutine stacks: docs/first-touch.md); the later
			// ones reuse what the runtime kept.
			r["run"] = i + 1
			r["minor_faults"] = minorFaults() - faults
		}
		b, err := json.Marshal(r)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(string(b))
	}
}

// minorFaults is the process's count of minor page faults so far
// (getrusage's ru_minflt): a first touch of fresh memory costs one per page.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}

// writeMemProfile writes the allocation profile of -memprofile.
func writeMemProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		err = errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: -memprofile: %v\n", err)
	}
}

// record builds the common fields of the peers' schema.
func record(workload, variant string, n int, elapsed time.Duration, extra rec) rec {
	r := rec{
		"impl":        "go-asyncio",
		"workload":    workload,
		"variant":     variant,
		"n":           n,
		"ns_per_op":   round1(float64(elapsed.Nanoseconds()) / float64(n)),
		"ops_per_s":   round1(float64(n) / elapsed.Seconds()),
		"rss_mb":      round2(float64(rssBytes()) / (1 << 20)),
		"peak_rss_mb": round2(float64(peakRSSBytes()) / (1 << 20)),
		"wall_s":      round4(elapsed.Seconds()),
		"gomaxprocs":  runtime.GOMAXPROCS(0),
		"go":          runtime.Version(),
	}
	for k, v := range extra {
		r[k] = v
	}
	return r
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
func round4(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

var pageSize = int64(os.Getpagesize())

// rssBytes is the current resident set size (/proc/self/statm).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.ParseInt(f[1], 10, 64)
	return p * pageSize
}

// peakRSSBytes is VmHWM (/proc/self/status).
func peakRSSBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) < 2 {
				return 0
			}
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// memStats returns the runtime's stack-in-use and heap-in-use bytes after a GC.
func memStats() (stack, heap uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.StackInuse, m.HeapInuse
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
