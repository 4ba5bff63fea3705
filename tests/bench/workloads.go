//go:build unix

package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Each workload runs inside asyncio.Run (asyncio.Runner in the peers):
// loop creation and teardown are outside the timed region.

// w1Batch is the number of tick callbacks per producer run (peers.py W1_BATCH).
const w1Batch = 999

// W1 callbacks: call_soon throughput, at most 1,000 handles ready at once.
func w1(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		l := t.Loop()
		done := asyncio.NewFuture[int](l)
		count, scheduled := 0, 0
		tick := func() {
			count++
			if count == n {
				done.SetResult(count)
			}
		}
		var producer func()
		producer = func() {
			k := min(w1Batch, n-scheduled)
			for range k {
				l.CallSoon(tick)
			}
			scheduled += k
			if scheduled < n {
				l.CallSoon(producer)
			}
		}
		t0 := time.Now()
		l.CallSoon(producer)
		if _, err := done.Await(t); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		if count != n {
			return nil, fmt.Errorf("count %d, want %d", count, n)
		}
		return record("W1", "", n, el, rec{"batch": w1Batch}), nil
	})
}

// W2 yield: one task doing n bare yields (sleep(0)).
func w2(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		yields := 0
		t0 := time.Now()
		task := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
			for range n {
				if err := asyncio.Sleep(t, 0); err != nil {
					return struct{}{}, err
				}
				yields++
			}
			return struct{}{}, nil
		})
		if _, err := task.Await(t); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		if yields != n {
			return nil, fmt.Errorf("%d yields, want %d", yields, n)
		}
		return record("W2", "", n, el, nil), nil
	})
}

// W3 pingpong: two tasks handing control to each other through futures;
// n = 2 × rounds handoffs.
func w3(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		l := t.Loop()
		rounds := n / 2
		var futA *asyncio.Future[int]
		futB := asyncio.NewFuture[int](l)
		sumA, sumB := 0, 0
		t0 := time.Now()
		tb := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
			for i := range rounds {
				v, err := futB.Await(t) // wait for A's handoff
				if err != nil {
					return struct{}{}, err
				}
				sumB += v
				futB = asyncio.NewFuture[int](l)
				futA.SetResult(i) // hand control to A
			}
			return struct{}{}, nil
		})
		ta := asyncio.CreateTask(t, func(t *asyncio.T) (struct{}, error) {
			for i := range rounds {
				futA = asyncio.NewFuture[int](l)
				futB.SetResult(i) // hand control to B
				v, err := futA.Await(t)
				if err != nil {
					return struct{}{}, err
				}
				sumA += v
			}
			return struct{}{}, nil
		})
		if _, err := ta.Await(t); err != nil {
			return nil, err
		}
		if _, err := tb.Await(t); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		want := rounds * (rounds - 1) / 2
		if sumA != want || sumB != want {
			return nil, fmt.Errorf("sums %d/%d, want %d", sumA, sumB, want)
		}
		return record("W3", "", rounds*2, el, nil), nil
	})
}

// child is W4's and W7's child(i): sleep(0), return i.
func child(i int) func(*asyncio.T) (int, error) {
	return func(t *asyncio.T) (int, error) {
		if err := asyncio.Sleep(t, 0); err != nil {
			return 0, err
		}
		return i, nil
	}
}

// W4 spawn: create n tasks and gather them.
func w4(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		base := rssBytes()
		t0 := time.Now()
		tasks := make([]*asyncio.Task[int], n)
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(t, child(i))
		}
		res, err := gatherInts(t, tasks)
		if err != nil {
			return nil, err
		}
		el := time.Since(t0)
		sum := 0
		for _, v := range res {
			sum += v
		}
		if want := n * (n - 1) / 2; sum != want || len(res) != n {
			return nil, fmt.Errorf("sum %d of %d results, want %d of %d", sum, len(res), want, n)
		}
		return record("W4", gatherVariant, n, el, rec{"rss_base_mb": round2(float64(base) / (1 << 20))}), nil
	})
}

// W5 constants: splitmix64 seed and the largest delay (µs).
const (
	w5Seed  = 42
	w5MaxUs = 50_000
)

// splitmix64DelaysUs is WORKLOADS.md's delay generator (identical to the
// peers' and loopsim's).
func splitmix64DelaysUs(n int, seed uint64, maxUs uint64) []uint64 {
	out := make([]uint64, n)
	s := seed
	for i := range out {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		out[i] = z % (maxUs + 1)
	}
	return out
}

// W5 timers: n call_later, cancel the odd ones, wait for the even ones.
func w5(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		l := t.Loop()
		delays := splitmix64DelaysUs(n, w5Seed, w5MaxUs)
		target := n - n/2
		done := asyncio.NewFuture[int](l)
		fired := 0
		cb := func() {
			fired++
			if fired == target {
				done.SetResult(fired)
			}
		}
		hs := make([]*asyncio.TimerHandle, n)
		start := l.Time()
		c0 := cpuTime()
		t0 := time.Now()
		for i, d := range delays {
			hs[i] = l.CallLater(time.Duration(d)*time.Microsecond, cb)
		}
		for i := 1; i < n; i += 2 {
			hs[i].Cancel()
		}
		tSched := time.Since(t0)
		if _, err := done.Await(t); err != nil {
			return nil, err
		}
		el := time.Since(t0)
		cpu := cpuTime() - c0
		// Cancelled timers must never fire: let every deadline pass, then
		// check the count again (outside the timed region).
		if err := asyncio.Sleep(t, start+w5MaxUs*time.Microsecond+time.Millisecond-l.Time()); err != nil {
			return nil, err
		}
		if fired != target {
			return nil, fmt.Errorf("%d timers fired, want %d", fired, target)
		}
		return record("W5", "", n, el, rec{
			"cpu_ns_per_op":              round1(float64(cpu) / float64(n)),
			"wall_minus_floor_ns_per_op": round1(float64(el-w5MaxUs*time.Microsecond) / float64(n)),
			"schedule_cancel_ns_per_op":  round1(float64(tSched) / float64(n)),
			"fired":                      fired,
		}), nil
	})
}

// parked is W6's and W10's task body: await its own never-done future.
func parked(t *asyncio.T) (struct{}, error) {
	_, err := asyncio.NewFuture[struct{}](t).Await(t)
	return struct{}{}, err
}

// W6 cancel: cancel n parked tasks and gather them with return_exceptions.
func w6(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		s0 := time.Now()
		tasks := make([]*asyncio.Task[struct{}], n)
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(t, parked)
		}
		if err := asyncio.Sleep(t, 0); err != nil { // every task starts and parks
			return nil, err
		}
		t0 := time.Now()
		for _, tk := range tasks {
			tk.Cancel()
		}
		errs, err := gatherErrs(t, tasks)
		if err != nil {
			return nil, err
		}
		el := time.Since(t0)
		cancelled := 0
		for _, e := range errs {
			if asyncio.IsCancelled(e) {
				cancelled++
			}
		}
		if cancelled != n {
			return nil, fmt.Errorf("%d of %d results are CancelledError", cancelled, n)
		}
		return record("W6", gatherVariant, n, el, rec{
			"setup_ns_per_op": round1(float64(t0.Sub(s0).Nanoseconds()) / float64(n)),
			"cancelled":       cancelled,
		}), nil
	})
}

// W7 taskgroup: spawn n children in a task group.
func w7(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		t0 := time.Now()
		tasks, err := taskGroupSpawn(t, n, child)
		if err != nil {
			return nil, err
		}
		el := time.Since(t0)
		sum := 0
		for _, tk := range tasks {
			v, err := tk.Result()
			if err != nil {
				return nil, err
			}
			sum += v
		}
		if want := n * (n - 1) / 2; sum != want || len(tasks) != n {
			return nil, fmt.Errorf("sum %d of %d results, want %d of %d", sum, len(tasks), want, n)
		}
		return record("W7", taskGroupVariant, n, el, nil), nil
	})
}

// childFail is W7f's child: sleep(0); number fail raises ValueError, every
// other one parks on its own never-done future until cancelled.
func childFail(fail int) func(i int) func(*asyncio.T) (int, error) {
	return func(i int) func(*asyncio.T) (int, error) {
		return func(t *asyncio.T) (int, error) {
			if err := asyncio.Sleep(t, 0); err != nil {
				return 0, err
			}
			if i == fail {
				return 0, &asyncio.ValueError{Msg: fmt.Sprint(i)}
			}
			_, err := asyncio.NewFuture[struct{}](t).Await(t)
			return 0, err
		}
	}
}

// W7f taskgroup failure: one child fails, the group cancels the other n-1.
func w7f(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		t0 := time.Now()
		tasks, err := taskGroupSpawn(t, n, childFail(n/2))
		el := time.Since(t0)
		if err := checkOneValueError(err); err != nil {
			return nil, err
		}
		cancelled := 0
		for _, tk := range tasks {
			if tk.Cancelled() {
				cancelled++
			}
		}
		if cancelled != n-1 || len(tasks) != n {
			return nil, fmt.Errorf("%d of %d children cancelled, want %d", cancelled, len(tasks), n-1)
		}
		return record("W7f", taskGroupVariant, n, el, rec{"cancelled": cancelled}), nil
	})
}

// W10 memory: RSS per parked task.
func w10(n int) (rec, error) {
	return asyncio.Run(func(t *asyncio.T) (rec, error) {
		tasks := make([]*asyncio.Task[struct{}], n)
		st0, hp0 := memStats()
		before := rssBytes()
		t0 := time.Now()
		for i := range tasks {
			tasks[i] = asyncio.CreateTask(t, parked)
		}
		if err := asyncio.Sleep(t, 0); err != nil { // all parked
			return nil, err
		}
		el := time.Since(t0)
		st1, hp1 := memStats()
		after := rssBytes()
		for _, tk := range tasks {
			if tk.Done() {
				return nil, fmt.Errorf("a parked task is done: %v", tk)
			}
		}
		r := record("W10", "", n, el, rec{
			"bytes_per_task":       round1(float64(after-before) / float64(n)),
			"stack_bytes_per_task": round1(float64(int64(st1)-int64(st0)) / float64(n)),
			"heap_bytes_per_task":  round1(float64(int64(hp1)-int64(hp0)) / float64(n)),
			"rss_before_mb":        round2(float64(before) / (1 << 20)),
		})
		// Untimed, as in the peers: cancel and collect the parked tasks.
		for _, tk := range tasks {
			tk.Cancel()
		}
		if _, err := gatherErrs(t, tasks); err != nil {
			return nil, err
		}
		runtime.KeepAlive(tasks)
		return r, nil
	})
}
