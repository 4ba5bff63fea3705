//go:build unix

package main

import "testing"

// Benchmarks over the workloads, for `go test -bench . -benchmem
// -cpuprofile` on the core's hot paths: one op = one of the workload's n.

func benchWorkload(b *testing.B, w string) {
	b.ReportAllocs()
	c0 := cpuTime()
	if _, err := workloads[w](max(b.N, 2)); err != nil {
		b.Fatal(err)
	}
	// Process CPU time (all threads, GC included) per op: steadier than
	// wall time on a machine shared with other jobs.
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkW1CallSoon(b *testing.B)  { benchWorkload(b, "W1") }
func BenchmarkW2Yield(b *testing.B)     { benchWorkload(b, "W2") }
func BenchmarkW3PingPong(b *testing.B)  { benchWorkload(b, "W3") }
func BenchmarkW4Spawn(b *testing.B)     { benchWorkload(b, "W4") }
func BenchmarkW6Cancel(b *testing.B)    { benchWorkload(b, "W6") }
func BenchmarkW7TaskGroup(b *testing.B) { benchWorkload(b, "W7") }
func BenchmarkW10Parked(b *testing.B)   { benchWorkload(b, "W10") }

// BenchmarkSpawnTrue: one op = one `true` spawned and waited for, 100 at
// a time (the spawn workload).
func BenchmarkSpawnTrue(b *testing.B) {
	old := subprocessRuns
	subprocessRuns = 1
	defer func() { subprocessRuns = old }()
	benchWorkload(b, "spawn")
}

// BenchmarkCatCommunicate: one op = 64 MiB through cat with Communicate,
// reported in MB/s (the cat workload).
func BenchmarkCatCommunicate(b *testing.B) {
	old := subprocessRuns
	subprocessRuns = 1
	defer func() { subprocessRuns = old }()
	b.SetBytes(64 << 20)
	for b.Loop() {
		if _, err := catCommunicate(64); err != nil {
			b.Fatal(err)
		}
	}
}
