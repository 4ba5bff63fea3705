package asyncio

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestH20_DiagNilArgumentsAreValueErrors: CaptureCallGraph, PrintCallGraph,
// FutureAddToAwaitedBy and FutureDiscardFromAwaitedBy checked only for a
// nil interface, so a nil *Task, *Future or *T in it died in a nil
// dereference, and Snapshot(nil) did the same; every other API taking an
// awaitable or a loop owner panics with a *ValueError naming the call
// (coreOf, loopOf), and that is the package's promise for bad input.
func TestH20_DiagNilArgumentsAreValueErrors(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var nilTask *Task[int]
		var nilFut *Future[int]
		var nilT *T
		var nilLoop *Loop
		f := NewFuture[int](tk)
		for name, call := range map[string]func(){
			"CaptureCallGraph":           func() { CaptureCallGraph(nilTask) },
			"FutureAddToAwaitedBy":       func() { FutureAddToAwaitedBy(nilFut, tk) },
			"FutureDiscardFromAwaitedBy": func() { FutureDiscardFromAwaitedBy(f, nilT) },
			"Snapshot":                   func() { Snapshot(nilLoop, SnapshotOptions{}) },
		} {
			p := mustPanic(t, name, call)
			err, _ := p.(error)
			if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), name+": nil") {
				t.Errorf("%s with a nil pointer: panicked with %v, want a ValueError naming %s", name, p, name)
			}
		}
		p := mustPanic(t, "Snapshot(nil)", func() { Snapshot(nil, SnapshotOptions{}) })
		if err, _ := p.(error); !errors.Is(err, ErrValue) {
			t.Errorf("Snapshot(nil): panicked with %v, want a ValueError", p)
		}
		var b strings.Builder
		p = mustPanic(t, "PrintCallGraph", func() { _ = PrintCallGraph(&b, nilTask) })
		if err, _ := p.(error); !errors.Is(err, ErrValue) || b.Len() != 0 {
			t.Errorf("PrintCallGraph(nil *Task): panicked with %v, wrote %q; want a ValueError and nothing written", p, b.String())
		}
		return nil
	})
}

// TestH20_AwaitedByEdgeAddedTwiceIsOneEdge: FutureAddToAwaitedBy(fut, w)
// twice registered two edges, so the call graph and the snapshot listed w
// twice as fut's awaiter, and one FutureDiscardFromAwaitedBy left w
// there. asyncio.future_add_to_awaited_by adds waiter to a set: the second
// add changes nothing and one discard removes the edge.
func TestH20_AwaitedByEdgeAddedTwiceIsOneEdge(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		f := NewFuture[int](tk)
		w := NewFuture[int](tk)
		FutureAddToAwaitedBy(f, w)
		FutureAddToAwaitedBy(f, w)
		if g := CaptureCallGraph(f); len(g.AwaitedBy) != 1 {
			t.Errorf("after two adds of one edge: %d awaiters in the graph, want 1:\n%s", len(g.AwaitedBy), FormatCallGraph(g))
		}
		FutureDiscardFromAwaitedBy(f, w)
		if g := CaptureCallGraph(f); len(g.AwaitedBy) != 0 {
			t.Errorf("after one discard: %d awaiters in the graph, want 0:\n%s", len(g.AwaitedBy), FormatCallGraph(g))
		}
		return nil
	})
}

// TestH20_SnapshotThreadsafeOnTheLoopTakesIt: SnapshotThreadsafe (and
// WriteDump, "what a signal handler calls") called on the loop itself — a
// task, or a callback such as an AddSignalHandler handler — queued its
// request behind the caller and waited for it: the loop, blocked by that
// very wait, could not take it, so the call held the loop for the whole
// timeout and then reported the loop blocked, with no tasks. On the loop
// the snapshot can be taken at once, as Snapshot does.
func TestH20_SnapshotThreadsafeOnTheLoopTakesIt(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		sleeper := startTask(tk, "sleeper", func(c *T) error { return Sleep(c, time.Hour) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		s := l.SnapshotThreadsafe(time.Millisecond, SnapshotOptions{})
		if s.Blocked || len(s.Tasks) != 2 {
			t.Errorf("SnapshotThreadsafe from a task: Blocked=%v, %d tasks, notes %q; want the 2 tasks", s.Blocked, len(s.Tasks), s.Notes)
		}
		var dump strings.Builder
		var dumpErr error
		done := NewFuture[struct{}](tk)
		l.CallSoon(func() {
			dumpErr = l.WriteDump(&dump, time.Millisecond)
			done.SetResult(struct{}{})
		})
		if _, err := done.Await(tk); err != nil {
			return err
		}
		if dumpErr != nil || strings.Contains(dump.String(), "blocked") || !strings.Contains(dump.String(), "sleeper") {
			t.Errorf("WriteDump from a callback: %v\n%s\nwant the task tree and table, not a blocked loop", dumpErr, dump.String())
		}
		sleeper.Cancel()
		awaitAll(tk, sleeper)
		return nil
	})
}

// TestH20_DiagFromForeignGoroutineIsRejected: Snapshot, CaptureCallGraph,
// FutureAddToAwaitedBy and FutureDiscardFromAwaitedBy are documented as
// calls to make on the loop, but unlike the loop's other APIs they made no
// thread check, so in debug mode (where a call from a goroutine not
// running the loop panics with a RuntimeError naming it, as asyncio's
// debug mode raises for a call from the wrong thread) they read and wrote
// the loop's tasks and futures from another goroutine, racing with it.
func TestH20_DiagFromForeignGoroutineIsRejected(t *testing.T) {
	saved := checkEveryMode
	checkEveryMode = false
	t.Cleanup(func() { checkEveryMode = saved })
	l := NewTestLoop()
	l.SetDebug(true)
	main := startTask(l, "main", func(tk *T) error {
		f := NewFuture[int](tk)
		for name, call := range map[string]func(){
			"Snapshot":                   func() { Snapshot(l, SnapshotOptions{}) },
			"CaptureCallGraph":           func() { CaptureCallGraph(f) },
			"FutureAddToAwaitedBy":       func() { FutureAddToAwaitedBy(f, tk) },
			"FutureDiscardFromAwaitedBy": func() { FutureDiscardFromAwaitedBy(f, tk) },
		} {
			err, _ := fromForeignGoroutine(call).(error)
			if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), name+" called from a goroutine that is not running the loop") {
				t.Errorf("%s from another goroutine in debug mode: %v, want the RuntimeError naming it", name, err)
			}
		}
		if g := CaptureCallGraph(f); len(g.AwaitedBy) != 0 {
			t.Errorf("the refused FutureAddToAwaitedBy added an edge:\n%s", FormatCallGraph(g))
		}
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

// TestH20_AwaitedByEdgeOfAnAwaitingTaskIsNotDoubled: FutureAddToAwaitedBy
// (fut, task) for a task that already awaits fut added a second edge next
// to the await's own, so the call graph listed the task twice. In asyncio
// (3.14, where the call-graph API comes from) a task awaiting a future is
// in the future's set of awaiters already, and adding it again changes
// nothing.
func TestH20_AwaitedByEdgeOfAnAwaitingTaskIsNotDoubled(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		f := NewFuture[int](tk)
		waiter := CreateTask(tk, func(c *T) (int, error) { return f.Await(c) }, WithName("waiter"))
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		FutureAddToAwaitedBy(f, waiter)
		if g := CaptureCallGraph(f); len(g.AwaitedBy) != 1 {
			t.Errorf("the awaiting task added as an awaiter: %d awaiters in the graph, want 1:\n%s", len(g.AwaitedBy), FormatCallGraph(g))
		}
		f.SetResult(1)
		_, err := waiter.Await(tk)
		return err
	})
}
