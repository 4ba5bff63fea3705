package asyncio

import (
	"io"
	"runtime/trace"
	"strings"
	"testing"
	"time"
)

// BenchmarkW4Diagnostics is W4's shape (spawn tasks that yield once, gather
// them) with each diagnostic switched on, to price it per task: one op is
// one task.
func BenchmarkW4Diagnostics(b *testing.B) {
	for _, c := range []struct {
		name  string
		opts  []LoopOption
		trace bool
	}{
		{"off", nil, false},
		{"stacks", []LoopOption{WithTaskStacks()}, false},
		{"labels", []LoopOption{WithTaskLabels()}, false},
		{"timing", []LoopOption{WithStepTiming()}, false},
		{"debug", []LoopOption{WithDebug()}, false},
		{"trace", nil, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.trace {
				if err := trace.Start(io.Discard); err != nil {
					b.Fatal(err)
				}
				defer trace.Stop()
			}
			b.ReportAllocs()
			l := NewLoop(c.opts...)
			defer l.Close()
			main := CreateTask(l, func(t *T) (int, error) {
				b.ResetTimer()
				tasks := make([]AwaitableOf[int], b.N)
				for i := range tasks {
					tasks[i] = CreateTask(t, func(t *T) (int, error) { return i, Sleep(t, 0) })
				}
				_, err := Gather(t, tasks...).Await(t)
				b.StopTimer()
				return 0, err
			})
			if err := l.RunUntilComplete(main); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkW2Diagnostics is W2's shape (one task doing bare yields) with
// step timing, debug mode or tracing on: one op is one yield, a step.
func BenchmarkW2Diagnostics(b *testing.B) {
	for _, c := range []struct {
		name  string
		opts  []LoopOption
		trace bool
	}{
		{"off", nil, false},
		{"timing", []LoopOption{WithStepTiming()}, false},
		{"debug", []LoopOption{WithDebug()}, false},
		{"trace", nil, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.trace {
				if err := trace.Start(io.Discard); err != nil {
					b.Fatal(err)
				}
				defer trace.Stop()
			}
			l := NewLoop(c.opts...)
			defer l.Close()
			main := CreateTask(l, func(t *T) (int, error) {
				b.ResetTimer()
				for range b.N {
					if err := Sleep(t, 0); err != nil {
						return 0, err
					}
				}
				b.StopTimer()
				return 0, nil
			})
			if err := l.RunUntilComplete(main); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkSnapshot100k takes a snapshot of a loop with 100,000 waiting
// tasks and writes its tree and table: one op is one snapshot and its
// text. It reports the output size; with stacks, the goroutine dump of
// 100,000 goroutines dominates.
func BenchmarkSnapshot100k(b *testing.B) {
	for _, stacks := range []bool{false, true} {
		name := "no-stacks"
		var opts []LoopOption
		if stacks {
			name, opts = "stacks", []LoopOption{WithTaskStacks()}
		}
		b.Run(name, func(b *testing.B) {
			l := NewLoop(append(opts, WithVirtualTime())...)
			defer l.Close()
			var size int
			main := CreateTask(l, func(t *T) (int, error) {
				stop := NewFuture[struct{}](t)
				for range 100_000 {
					//asynciovet:ignore unawaitedtask the tasks end when stop completes; the loop's close reaps any left
					CreateTask(t, func(t *T) (int, error) { _, err := stop.Await(t); return 0, err })
				}
				if err := Sleep(t, time.Second); err != nil {
					return 0, err
				}
				b.ResetTimer()
				for range b.N {
					var out strings.Builder
					s := Snapshot(t, SnapshotOptions{})
					_ = s.WriteTree(&out)
					_ = s.WritePS(&out)
					size = out.Len()
				}
				b.StopTimer()
				stop.SetResult(struct{}{})
				return 0, nil
			})
			if err := l.RunUntilComplete(main); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(size), "bytes-out")
		})
	}
}
