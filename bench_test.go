package asyncio

import (
	"fmt"
	"testing"
)

// The W1–W3 shapes of /work/shared/bench/WORKLOADS.md as Go benchmarks,
// on a real-time loop; one op is one tick (W1), one sleep(0) (W2) or one
// handoff (W3). Loop creation and teardown are outside the timed region.

func BenchmarkW1CallSoon(b *testing.B) {
	b.ReportAllocs()
	l := NewLoop()
	defer l.Close()
	n := b.N
	done := NewFuture[int](l)
	count, scheduled := 0, 0
	tick := func() {
		count++
		if count == n {
			done.SetResult(count)
		}
	}
	var producer func()
	producer = func() {
		k := min(999, n-scheduled)
		for range k {
			l.CallSoon(tick)
		}
		scheduled += k
		if scheduled < n {
			l.CallSoon(producer)
		}
	}
	main := CreateTask(l, func(t *T) (int, error) {
		b.ResetTimer()
		l.CallSoon(producer)
		v, err := done.Await(t)
		b.StopTimer()
		return v, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		b.Fatal(err)
	}
	if v, _ := main.Result(); v != n {
		b.Fatalf("count %d, want %d", v, n)
	}
}

func BenchmarkW2SleepZero(b *testing.B) {
	b.ReportAllocs()
	l := NewLoop()
	defer l.Close()
	n := b.N
	main := CreateTask(l, func(t *T) (int, error) {
		b.ResetTimer()
		yielder := CreateTask(t, func(t *T) (int, error) {
			for i := range n {
				if err := Sleep(t, 0); err != nil {
					return i, err
				}
			}
			return n, nil
		})
		v, err := yielder.Await(t)
		b.StopTimer()
		return v, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		b.Fatal(err)
	}
	if v, _ := main.Result(); v != n {
		b.Fatalf("yields %d, want %d", v, n)
	}
}

func BenchmarkW3FuturePingPong(b *testing.B) {
	b.ReportAllocs()
	l := NewLoop()
	defer l.Close()
	rounds := max(1, (b.N+1)/2) // two handoffs per round
	main := CreateTask(l, func(t *T) (int, error) {
		b.ResetTimer()
		futB := NewFuture[int](t)
		var futA *Future[int]
		sumB := 0
		taskB := CreateTask(t, func(t *T) (int, error) {
			for i := range rounds {
				v, err := futB.Await(t)
				if err != nil {
					return 0, err
				}
				sumB += v
				futB = NewFuture[int](t)
				futA.SetResult(i)
			}
			return sumB, nil
		})
		taskA := CreateTask(t, func(t *T) (int, error) {
			sum := 0
			for i := range rounds {
				futA = NewFuture[int](t)
				futB.SetResult(i)
				v, err := futA.Await(t)
				if err != nil {
					return 0, err
				}
				sum += v
			}
			return sum, nil
		})
		a, err := taskA.Await(t)
		if err != nil {
			return 0, err
		}
		bsum, err := taskB.Await(t)
		b.StopTimer()
		if want := rounds * (rounds - 1) / 2; a != want || bsum != want {
			return 0, fmt.Errorf("sums %d, %d, want %d", a, bsum, want)
		}
		return a, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		b.Fatal(err)
	}
}

// W12's shape: a task on loop 0 of a two-loop group calls a function on
// loop 1 and awaits the result, b.N times in sequence; one op is one
// round trip.
func BenchmarkW12CrossLoopCall(b *testing.B) {
	for _, form := range []string{"CallOn", "CallFuncOn"} {
		b.Run(form, func(b *testing.B) {
			b.ReportAllocs()
			g := NewLoopGroup(WithLoops(2))
			defer g.Close()
			_, err := RunGroup(g, func(t *T) (int, error) {
				target := g.Loop(1)
				x := 0
				var err error
				b.ResetTimer()
				for range b.N {
					v := x
					if form == "CallOn" {
						x, err = CallOn(t, target, func(*T) (int, error) { return v + 1, nil })
					} else {
						x, err = CallFuncOn(t, target, func() (int, error) { return v + 1, nil })
					}
					if err != nil {
						return 0, err
					}
				}
				b.StopTimer()
				if x != b.N {
					return 0, fmt.Errorf("x = %d, want %d", x, b.N)
				}
				return x, nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// A RunUntilComplete of a task that returns at once, b.N times on one
// loop (a synchronous wrapper's pattern): the cost of entering and
// leaving the loop.
func BenchmarkRunUntilCompleteShort(b *testing.B) {
	b.ReportAllocs()
	l := NewLoop()
	defer l.Close()
	for range b.N {
		tk := CreateTask(l, func(t *T) (int, error) { return 1, nil })
		if err := l.RunUntilComplete(tk); err != nil {
			b.Fatal(err)
		}
	}
}
