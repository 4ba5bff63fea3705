package asyncio

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// graphShape renders a call graph as "name <- awaiter <- ..." lines, one
// per path from the root to an awaiter with none, for comparisons that do
// not depend on addresses.
func graphShape(g *FutureCallGraph) []string {
	var out []string
	var walk func(g *FutureCallGraph, prefix string)
	walk = func(g *FutureCallGraph, prefix string) {
		name := nodeName(g.Future)
		if prefix != "" {
			name = prefix + " <- " + name
		}
		if len(g.AwaitedBy) == 0 {
			out = append(out, name)
		}
		for i := range g.AwaitedBy {
			walk(&g.AwaitedBy[i], name)
		}
	}
	walk(g, "")
	return out
}

func nodeName(aw Awaitable) string {
	f := aw.core()
	if f.task != nil {
		return f.task.Name()
	}
	return f.kind.String()
}

// The awaited-by edges through every combinator and primitive, as the
// await graph of a leaf task shows them: as in asyncio, a Gather, Shield
// or Wait links its children to the task awaiting it.
func TestCallGraph_EdgesThroughCombinators(t *testing.T) {
	cases := []struct {
		name string
		// wrap makes task "outer" wait on leaf in some way.
		wrap func(tk *T, leaf *Task[int]) error
		want []string
	}{
		{"plain await", func(tk *T, leaf *Task[int]) error { _, err := leaf.Await(tk); return err },
			[]string{"leaf <- outer"}},
		{"Gather", func(tk *T, leaf *Task[int]) error { _, err := Gather[int](tk, leaf).Await(tk); return err },
			[]string{"leaf <- outer"}},
		{"Shield", func(tk *T, leaf *Task[int]) error { _, err := Shield[int](leaf).Await(tk); return err },
			[]string{"leaf <- outer"}},
		{"WaitFor", func(tk *T, leaf *Task[int]) error { _, err := WaitFor[int](tk, time.Hour, leaf); return err },
			[]string{"leaf <- outer"}},
		{"Wait", func(tk *T, leaf *Task[int]) error {
			_, _, err := Wait(tk, []Awaitable{leaf}, Never, AllCompleted)
			return err
		}, []string{"leaf <- outer"}},
		{"AsCompleted", func(tk *T, leaf *Task[int]) error {
			for _, err := range AsCompleted(tk, []Awaitable{leaf}, Never) {
				return err
			}
			return nil
		}, []string{"leaf <- outer"}},
		{"TaskGroup", func(tk *T, _ *Task[int]) error {
			return TaskGroup(tk, func(g *Group) error {
				_, err := Spawn(g, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }, WithName("child"))
				return err
			})
		}, []string{"child <- outer"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			runVirtual(t, func(tk *T) error {
				leaf := CreateTask(tk, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }, WithName("leaf"))
				outer := startTask(tk, "outer", func(tk *T) error { return c.wrap(tk, leaf) })
				if err := Sleep(tk, time.Second); err != nil {
					return err
				}
				root := Awaitable(leaf)
				if c.name == "TaskGroup" {
					for _, x := range AllTasks(tk) {
						if x.Name() == "child" {
							root = x
						}
					}
				}
				got = graphShape(CaptureCallGraph(root))
				outer.Cancel()
				leaf.Cancel()
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				_ = tk.Await(outer)
				return nil
			})
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("graph (-want +got):\n%s", d)
			}
		})
	}
}

// A task waiting on a Lock or a Queue awaits the primitive's waiter future,
// whose kind says which primitive it is.
func TestCallGraph_LockAndQueueWaiters(t *testing.T) {
	var got []string
	runVirtual(t, func(tk *T) error {
		lk := NewLock()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = lk.Acquire(tk)
		q := NewQueue[int](1)
		_ = q.PutNowait(1)
		a := startTask(tk, "locker", func(tk *T) error { return lk.Acquire(tk) })
		b := startTask(tk, "putter", func(tk *T) error { return q.Put(tk, 2) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		got = append(got, awaitKind(a.t.futWaiter), awaitKind(b.t.futWaiter))
		a.Cancel()
		b.Cancel()
		return nil
	})
	if d := cmp.Diff([]string{"Lock.Acquire", "Queue.Put"}, got); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
}

// The running task's own call stack starts at CaptureCallGraph's caller;
// a suspended task's (with WithTaskStacks) at the library call it waits in.
func TestCallGraph_Stacks(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var self, other *FutureCallGraph
	var selfLine, otherLine int
	main := startTask(l, "main", func(tk *T) error {
		w := startTask(tk, "worker", func(tk *T) error {
			otherLine = nextLine()
			return Sleep(tk, time.Hour)
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		selfLine = nextLine()
		self = CaptureCallGraph(tk)
		other = CaptureCallGraph(w)
		w.Cancel()
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if len(self.CallStack) == 0 || self.CallStack[0].Line != selfLine || !strings.HasSuffix(self.CallStack[0].File, "/diag_callgraph_test.go") {
		t.Errorf("own stack %v, want diag_callgraph_test.go:%d first", self.CallStack, selfLine)
	}
	if len(other.CallStack) < 2 || shortFunc(other.CallStack[0].Function) != "asyncio.Sleep" || other.CallStack[1].Line != otherLine {
		t.Errorf("worker's stack %v, want asyncio.Sleep then line %d", other.CallStack, otherLine)
	}
}

// FormatCallGraph follows asyncio's print_call_graph layout.
func TestFormatCallGraph_Layout(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var out string
	main := startTask(l, "main", func(tk *T) error {
		leaf := startTask(tk, "leaf", func(tk *T) error { return Sleep(tk, time.Hour) })
		g := Gather[struct{}](tk, leaf)
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		var b strings.Builder
		if err := PrintCallGraph(&b, leaf); err != nil {
			return err
		}
		out = b.String()
		g.Cancel()
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	out = regexp.MustCompile(`0x[0-9a-f]+`).ReplaceAllString(out, "0xID")
	out = regexp.MustCompile(`File '[^']*/([^/']+)', line \d+`).ReplaceAllString(out, "File '$1', line N")
	want := `* Task(name='leaf', id=0xID)
  + Call stack:
  |   File 'task.go', line N, in asyncio.Sleep()
  |   File 'diag_callgraph_test.go', line N, in asyncio.TestFormatCallGraph_Layout.func1.1()
  |   File 'helpers_test.go', line N, in asyncio.startTask.func1()
  + Awaited by:
    * Future(id=0xID, kind='gather')
`
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("layout (-want +got):\n%s", d)
	}
}

// Tasks awaiting each other (a deadlock) give a graph cut where the cycle
// closes.
func TestCallGraph_CycleIsCut(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var a, b *Task[struct{}]
	a = startTask(l, "a", func(tk *T) error { return tk.Await(b) })
	b = startTask(l, "b", func(tk *T) error { return tk.Await(a) })
	if err := l.RunForever(); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("RunForever: %v, want a deadlock", err)
	}
	if d := cmp.Diff([]string{"a <- b"}, graphShape(CaptureCallGraph(a))); d != "" {
		t.Errorf("graph (-want +got):\n%s", d)
	}
	var tree strings.Builder
	_ = Snapshot(l, SnapshotOptions{}).WriteTree(&tree)
	if !strings.Contains(tree.String(), "cycle: ") {
		t.Errorf("tree has no cycle line:\n%s", tree.String())
	}
}

// FutureAddToAwaitedBy adds an edge for a user-written combinator; the
// edge is never run as a callback, RemoveDoneCallback cannot remove it,
// FutureDiscardFromAwaitedBy does, and completing the future drops it.
func TestFutureAddToAwaitedBy(t *testing.T) {
	var shapes [][]string
	var removed int
	runVirtual(t, func(tk *T) error {
		inner := NewFuture[int](tk)
		outer := NewFuture[string](tk)
		FutureAddToAwaitedBy(inner, outer)
		waiter := startTask(tk, "user", func(tk *T) error { _, err := outer.Await(tk); return err })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		shapes = append(shapes, graphShape(CaptureCallGraph(inner)))
		removed = inner.RemoveDoneCallback(0)
		FutureDiscardFromAwaitedBy(inner, outer)
		shapes = append(shapes, graphShape(CaptureCallGraph(inner)))
		FutureAddToAwaitedBy(inner, outer)
		inner.SetResult(1) // the edge must not be scheduled as a callback
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		shapes = append(shapes, graphShape(CaptureCallGraph(inner)))
		FutureAddToAwaitedBy(inner, outer) // done: nothing to add
		shapes = append(shapes, graphShape(CaptureCallGraph(inner)))
		outer.SetResult("x")
		return tk.Await(waiter)
	})
	want := [][]string{{"future <- future <- user"}, {"future"}, {"future"}, {"future"}}
	if d := cmp.Diff(want, shapes); d != "" || removed != 0 {
		t.Errorf("graphs (-want +got):\n%s\nRemoveDoneCallback(0) removed %d", d, removed)
	}
}

// Bad arguments panic with a *ValueError before anything changes.
func TestCallGraph_BadInput(t *testing.T) {
	l1, l2 := NewTestLoop(), NewTestLoop()
	defer mustClose(t, l1)
	defer mustClose(t, l2)
	f1, f2 := NewFuture[int](l1), NewFuture[int](l2)
	for name, f := range map[string]func(){
		"CaptureCallGraph(nil)":             func() { CaptureCallGraph(nil) },
		"FutureAddToAwaitedBy(nil, f)":      func() { FutureAddToAwaitedBy(nil, f1) },
		"FutureAddToAwaitedBy(f, nil)":      func() { FutureAddToAwaitedBy(f1, nil) },
		"FutureAddToAwaitedBy across loops": func() { FutureAddToAwaitedBy(f1, f2) },
		"FutureDiscardFromAwaitedBy(nil, f)": func() {
			FutureDiscardFromAwaitedBy(nil, f1)
		},
	} {
		v := mustPanic(t, name, f)
		if _, ok := v.(*ValueError); !ok {
			t.Errorf("%s panicked with %v (%T), want *ValueError", name, v, v)
		}
	}
	if len(f1.registered()) != 0 {
		t.Errorf("a rejected call changed the future: %d callbacks", len(f1.registered()))
	}
	if s := fmt.Sprint(awaitableOf(&f1.futureCore)); s != "<Future pending kind=future>" {
		t.Errorf("view %q", s)
	}
}

// Without WithTaskStacks (or debug mode) a suspended task's frames are not
// recorded: the printed graph says how to get them instead of showing none.
func TestFormatCallGraph_SaysHowToGetFrames(t *testing.T) {
	for _, opts := range [][]LoopOption{{WithVirtualTime()}, {WithVirtualTime(), WithTaskStacks()}} {
		l := NewLoop(opts...)
		var out string
		main := CreateTask(l, func(tk *T) (struct{}, error) {
			leaf := startTask(tk, "leaf", func(tk *T) error { return Sleep(tk, time.Second) })
			if err := Sleep(tk, 0); err != nil {
				return struct{}{}, err
			}
			out = FormatCallGraph(CaptureCallGraph(leaf))
			_, err := leaf.Await(tk)
			return struct{}{}, err
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatal(err)
		}
		mustClose(t, l)
		hint := strings.Contains(out, "Call stack: not recorded (create the loop with WithTaskStacks() or in debug mode)")
		if want := len(opts) == 1; hint != want {
			t.Errorf("options %d: hint %v, want %v:\n%s", len(opts), hint, want, out)
		}
	}
}
