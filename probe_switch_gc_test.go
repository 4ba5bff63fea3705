package asyncio

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
)

// A finished task that resumed another from its goroutine (runReady's
// nested resume: a child's first step after the parent parks) is garbage
// once nothing references it. Loop.resumers kept the last such task in
// its backing array after the resume returned (a truncation without
// clearing), so the task, its function's closure and all it captured
// stayed reachable until another nested resume overwrote the slot: among
// them a failed future whose "never retrieved" report (FUT-10) then came
// only at Close, not on collection.
func TestProbeSwitch_TaskThatResumedAnotherIsCollected(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	reports := 0
	l.SetExceptionHandler(func(*Loop, ExceptionContext) { reports++ })
	var collected atomic.Int32
	func() {
		var failed *Future[int] // captured by main's closure
		main := CreateTask(l, func(tk *T) (int, error) {
			failed = NewFuture[int](tk)
			_ = failed.SetException(errors.New("never read"))
			child := CreateTask(tk, func(*T) (int, error) { return 1, nil })
			return child.Await(tk) // parks: the child runs from main's goroutine
		})
		runtime.AddCleanup(main, func(int) { collected.Add(1) }, 0)
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
	}()
	for i := 0; i < 50 && (collected.Load() == 0 || reports == 0); i++ {
		runtime.GC()
		runOne(t, l)
	}
	if collected.Load() == 0 || reports != 1 {
		t.Errorf("main collected: %v, reports before Close: %d; want true, 1", collected.Load() != 0, reports)
	}
}
