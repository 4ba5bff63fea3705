package asyncio

import (
	"iter"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio/internal/gid"
	"go.uber.org/goleak"
)

// A finished task's goroutine parks in its loop's pool and hosts the next
// new task, instead of exiting; Close ends the pooled goroutines.
func TestTaskGoroutinePool_ReusesFinishedTasksGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	var first, second uint64
	main := CreateTask(l, func(t *T) (int, error) {
		a := CreateTask(t, func(t *T) (int, error) { first = gid.Current(); return 0, nil })
		if _, err := a.Await(t); err != nil {
			return 0, err
		}
		b := CreateTask(t, func(t *T) (int, error) { second = gid.Current(); return 0, Sleep(t, 0) })
		_, err := b.Await(t)
		return 0, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if first == 0 || second != first {
		t.Errorf("second task on goroutine %d, want the first's (%d)", second, first)
	}
	if len(l.workers) == 0 {
		t.Error("no goroutine pooled after the tasks finished")
	}
	mustClose(t, l)
	if len(l.workers) != 0 {
		t.Errorf("%d pooled goroutines after Close", len(l.workers))
	}
}

// The pool is bounded.
func TestTaskGoroutinePool_Bounded(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewTestLoop()
	defer mustClose(t, l)
	main := CreateTask(l, func(t *T) (int, error) {
		tasks := make([]AwaitableOf[int], maxPooledWorkers+50)
		for i := range tasks {
			tasks[i] = CreateTask(t, func(t *T) (int, error) { return i, Sleep(t, 0) })
		}
		_, err := Gather(t, tasks...).Await(t)
		return 0, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if len(l.workers) != maxPooledWorkers {
		t.Errorf("%d pooled goroutines, want the bound %d", len(l.workers), maxPooledWorkers)
	}
}

// A goroutine whose pprof labels the loop set (WithTaskLabels) is not
// pooled, so no task runs under another task's label.
func TestTaskGoroutinePool_LabelledGoroutineNotReused(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := NewLoop(WithVirtualTime(), WithTaskLabels())
	defer mustClose(t, l)
	var first, second uint64
	main := CreateTask(l, func(t *T) (int, error) {
		a := CreateTask(t, func(t *T) (int, error) { first = gid.Current(); return 0, nil })
		if _, err := a.Await(t); err != nil {
			return 0, err
		}
		b := CreateTask(t, func(t *T) (int, error) { second = gid.Current(); return 0, nil })
		_, err := b.Await(t)
		return 0, err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if second == first || len(l.workers) != 0 {
		t.Errorf("goroutines %d then %d, %d pooled: want two goroutines, none pooled", first, second, len(l.workers))
	}
}

// A task on a reused goroutine shows the same name and snapshot stack as
// on a fresh one: the pool's frames are below the task's function.
func TestTaskGoroutinePool_SnapshotStackUnchanged(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var s *LoopSnapshot
	pooled := -1
	main := CreateTask(l, func(t *T) (int, error) {
		a := CreateTask(t, func(t *T) (int, error) { return 0, nil })
		if _, err := a.Await(t); err != nil {
			return 0, err
		}
		b := CreateTask(t, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) }, WithName("reused"))
		if err := Sleep(t, 0); err != nil {
			return 0, err
		}
		pooled = len(l.workers)
		s = Snapshot(t, SnapshotOptions{})
		b.Cancel()
		//asynciovet:ignore droppedcancel the awaited task was cancelled here on purpose: its CancelledError is expected
		_, _ = b.Await(t)
		return 0, nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if pooled != 0 {
		t.Errorf("%d pooled goroutines: the second task did not take the first's", pooled)
	}
	var got []string
	for _, ti := range s.Tasks {
		if ti.Name != "reused" {
			continue
		}
		for _, f := range ti.Stack {
			got = append(got, shortFunc(f.Function))
		}
	}
	want := "asyncio.Sleep asyncio.TestTaskGoroutinePool_SnapshotStackUnchanged.func1.2"
	if strings.Join(got, " ") != want {
		t.Errorf("stack of the task on a reused goroutine: %q, want %q", strings.Join(got, " "), want)
	}
}

// Starting a task's goroutine allocates what iter.Pull allocates and
// nothing of the loop's (no per-goroutine record, no closure: the
// switching functions live in the task, every goroutine runs the loop's
// one body). W10's bytes per parked task depend on it.
func TestTaskGoroutine_AllocatesOnlyIterPull(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const n = 1000
	mallocs := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.Mallocs
	}
	// The floor: a coroutine started and parked, as a task's goroutine is.
	// Measured the second time, as the tasks are: by then the runtime
	// reuses exited goroutines' descriptors for both.
	var pull float64
	for range 2 {
		stops := make([]func(), n)
		m0 := mallocs()
		for i := range stops {
			var next func() (struct{}, bool)
			next, stops[i] = iter.Pull(func(yield func(struct{}) bool) { yield(struct{}{}) })
			next()
		}
		pull = float64(mallocs()-m0) / n
		for _, stop := range stops {
			stop()
		}
	}

	l := NewTestLoop()
	gate := NewFuture[struct{}](l)
	parked := func(t *T) (struct{}, error) { _, err := gate.Await(t); return struct{}{}, err }
	tasks := make([]*Task[struct{}], n)
	m0 := mallocs()
	for i := range tasks {
		tasks[i] = CreateTask(l, parked)
	}
	if err := l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) })); err != nil {
		t.Fatal(err) // all parked
	}
	perTask := float64(mallocs()-m0) / n
	gate.SetResult(struct{}{})
	aws := make([]AwaitableOf[struct{}], n)
	for i, tk := range tasks {
		aws[i] = tk
	}
	if err := l.RunUntilComplete(Gather(l, aws...)); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	t.Logf("%.2f allocations per parked task, %.2f per iter.Pull goroutine", perTask, pull)
	// The task itself is one allocation; the loop's lists grow by
	// doubling (a fraction per task).
	if extra := perTask - pull; extra > 1.5 {
		t.Errorf("a parked task costs %.2f allocations, iter.Pull's goroutine %.2f: %.2f more, want at most 1.5 (the task)", perTask, pull, extra)
	}
}
