package asyncio

import (
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// pauseWatcher is an unrelated goroutine that sleeps 200 µs at a time and
// records the longest it overslept: the pause the rest of the process saw.
type pauseWatcher struct {
	stop, done chan struct{}
	maxGap     atomic.Int64
}

func watchPauses() *pauseWatcher {
	p := &pauseWatcher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(200 * time.Microsecond)
			if gap := int64(time.Since(t0)); gap > p.maxGap.Load() {
				p.maxGap.Store(gap)
			}
		}
	}()
	return p
}

func (p *pauseWatcher) end() time.Duration {
	close(p.stop)
	<-p.done
	return time.Duration(p.maxGap.Load())
}

// BenchmarkDiagnosticsAtScale prices, with ASYNCIO_BENCH_TASKS parked
// tasks (default 100,000; docs/diagnostics-cost.md), one watchdog report
// of a step blocked for 600 ms (the longest pause an unrelated goroutine
// saw during it, against the same block with the watchdog off) and one
// snapshot WithTaskStacks (its time, and that pause). One op is one
// report or one snapshot; run it with -benchtime 1x.
func BenchmarkDiagnosticsAtScale(b *testing.B) {
	n := 100_000
	if s := os.Getenv("ASYNCIO_BENCH_TASKS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	run := func(b *testing.B, opts []LoopOption, body func(b *testing.B, l *Loop, t *T)) {
		l := NewLoop(opts...)
		defer l.Close()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		main := CreateTask(l, func(t *T) (int, error) {
			cleanup, err := parkTasks(t, n)
			if err != nil {
				return 0, err
			}
			b.ResetTimer()
			for range b.N {
				body(b, l, t)
			}
			b.StopTimer()
			return 0, cleanup()
		})
		if err := l.RunUntilComplete(main); err != nil {
			b.Fatal(err)
		}
	}
	block := func(b *testing.B, l *Loop, _ *T) {
		p := watchPauses()
		//asynciovet:ignore blockingcall blocking the loop on purpose is what this benchmark measures (the watchdog's report)
		time.Sleep(600 * time.Millisecond) // blocks the loop
		b.ReportMetric(float64(p.end())/1e6, "max-pause-ms")
	}
	b.Run("block-watchdog-off", func(b *testing.B) {
		run(b, nil, func(b *testing.B, l *Loop, t *T) { l.SetBlockedThreshold(0); block(b, l, t) })
	})
	b.Run("block-watchdog-100ms", func(b *testing.B) {
		run(b, nil, func(b *testing.B, l *Loop, t *T) { l.SetBlockedThreshold(100 * time.Millisecond); block(b, l, t) })
	})
	b.Run("snapshot-stacks", func(b *testing.B) {
		run(b, []LoopOption{WithTaskStacks()}, func(b *testing.B, l *Loop, t *T) {
			l.SetBlockedThreshold(0)
			p := watchPauses()
			t0 := time.Now()
			s := Snapshot(t, SnapshotOptions{})
			b.ReportMetric(float64(time.Since(t0))/1e6, "snapshot-ms")
			b.ReportMetric(float64(p.end())/1e6, "max-pause-ms")
			withStack := 0
			for _, ti := range s.Tasks {
				if len(ti.Stack) > 0 {
					withStack++
				}
			}
			b.ReportMetric(float64(withStack), "stacks")
		})
	})
}
