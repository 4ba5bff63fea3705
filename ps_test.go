package asyncio

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// normalizeDump replaces what changes from run to run in a dump:
// addresses, goroutine ids, directories and line numbers.
func normalizeDump(s string) string {
	s = regexp.MustCompile(`0x[0-9a-f]{2,}`).ReplaceAllString(s, "0xID")
	s = regexp.MustCompile(`/[^ ]*/([^/ ]+\.go):\d+`).ReplaceAllString(s, "$1:N")
	s = regexp.MustCompile(`(?m)^\d+ +`).ReplaceAllStringFunc(s, func(m string) string { return "G" + strings.Repeat(" ", len(m)-1) })
	s = regexp.MustCompile(` +\n`).ReplaceAllString(s, "\n")
	return s
}

// dumpScenario is a main task whose TaskGroup holds a worker waiting on a
// queue and a child awaiting a sleeper task; it returns the snapshot taken
// after 1.5s.
func dumpScenario(t *testing.T) *LoopSnapshot {
	t.Helper()
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var snap *LoopSnapshot
	main := startTask(l, "main", func(tk *T) error {
		q := NewQueue[int](0)
		return TaskGroup(tk, func(g *Group) error {
			worker, _ := Spawn(g, func(tk *T) (int, error) { return q.Get(tk) }, WithName("worker"))
			sleeper := CreateTask(tk, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) }, WithName("sleeper"))
			_, _ = Spawn(g, func(tk *T) (int, error) { return sleeper.Await(tk) }, WithName("awaiter"))
			if err := Sleep(tk, 1500*time.Millisecond); err != nil {
				return err
			}
			worker.Cancel("enough")
			snap = Snapshot(tk, SnapshotOptions{})
			sleeper.Cancel()
			return nil
		})
	})
	if err := l.RunUntilComplete(main); err != nil && !IsCancelled(err) {
		t.Fatal(err)
	}
	return snap
}

// The tree: roots are tasks nobody awaits; under each task its frames,
// outermost first, then the tasks it awaits.
func TestWriteTree_Layout(t *testing.T) {
	var b strings.Builder
	if err := dumpScenario(t).WriteTree(&b); err != nil {
		t.Fatal(err)
	}
	want := `└── (T) main [running]
    └──  asyncio.startTask.func1 helpers_test.go:N
        └──  asyncio.dumpScenario.func1 ps_test.go:N
            └──  asyncio.TaskGroup taskgroup.go:N
                └──  asyncio.dumpScenario.func1.1 ps_test.go:N
                    └──  asyncio.Snapshot introspect.go:N
                        ├── (T) worker [ready; cancelling 1]
                        │   └──  asyncio.dumpScenario.func1.1.1 ps_test.go:N
                        │       └──  asyncio.(*Queue[...]).Get queues.go:N
                        └── (T) awaiter [waiting 1.5s on task 'sleeper']
                            └──  asyncio.dumpScenario.func1.1.3 ps_test.go:N
                                └──  asyncio.(*Task[...]).Await task.go:N
                                    └── (T) sleeper [waiting 1.5s on sleep]
                                        └──  asyncio.dumpScenario.func1.1.2 ps_test.go:N
                                            └──  asyncio.Sleep task.go:N
`
	if d := cmp.Diff(want, normalizeDump(b.String())); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}

// The table: asyncio ps's columns (tid, task id, task name, coroutine
// stack, awaiter chain, awaiter name, awaiter id) with state, awaits,
// waiting, cancels (pending/requested) and creator in between.
func TestWritePS_Layout(t *testing.T) {
	var b strings.Builder
	if err := dumpScenario(t).WritePS(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(normalizeDump(b.String()), "\n")
	header := regexp.MustCompile(` +`).Split(strings.TrimSpace(lines[0]), -1)
	wantHeader := []string{"tid", "task", "id", "task", "name", "state", "awaits", "waiting", "cancels", "creator",
		"coroutine", "stack", "awaiter", "chain", "awaiter", "name", "awaiter", "id"}
	if d := cmp.Diff(wantHeader, header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if strings.Trim(lines[1], "-") != "" || len(lines[1]) < 200 {
		t.Errorf("rule line %q", lines[1])
	}
	var rows []string
	for _, l := range lines[2:] {
		if l != "" {
			rows = append(rows, regexp.MustCompile(` {2,}`).ReplaceAllString(l, " | "))
		}
	}
	mainChain := "asyncio.Snapshot -> asyncio.dumpScenario.func1.1 -> asyncio.TaskGroup -> asyncio.dumpScenario.func1 -> asyncio.startTask.func1"
	want := []string{
		"G | 0xID | main | running | " + mainChain + " | 0x0",
		"G | 0xID | worker | ready | 1/1 | main (0xID) | asyncio.(*Queue[...]).Get -> asyncio.dumpScenario.func1.1.1 " + mainChain + " main | 0xID",
		"G | 0xID | sleeper | waiting | sleep | 1.5s | main (0xID) | asyncio.Sleep -> asyncio.dumpScenario.func1.1.2 | asyncio.(*Task[...]).Await -> asyncio.dumpScenario.func1.1.3 awaiter | 0xID",
		"G | 0xID | awaiter | waiting | task 'sleeper' | 1.5s | main (0xID) | asyncio.(*Task[...]).Await -> asyncio.dumpScenario.func1.1.3 " + mainChain + " main | 0xID",
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}

// A task awaited by two tasks is drawn under each; one that awaits other
// tasks is drawn in full once, then referred to, and one that awaits none
// is repeated in full, as pstree repeats it.
func TestWriteTree_SharedTaskDrawnOnce(t *testing.T) {
	var b strings.Builder
	runNamed(t, func(tk *T) error {
		inner := startTask(tk, "inner", func(tk *T) error { return Sleep(tk, time.Hour) })
		shared := startTask(tk, "shared", func(tk *T) error { return tk.Await(inner) })
		startTask(tk, "a", func(tk *T) error { return tk.Await(shared) })
		startTask(tk, "b", func(tk *T) error { return tk.Await(shared) })
		startTask(tk, "c", func(tk *T) error { return tk.Await(inner) })
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		s := Snapshot(tk, SnapshotOptions{})
		s.Notes = nil
		_ = s.WriteTree(&b)
		inner.Cancel()
		return nil
	})
	want := `└── (T) main [running]
└── (T) a [waiting 1s on task 'shared']
    └── (T) shared [waiting 1s on task 'inner']
        └── (T) inner [waiting 1s on sleep]
└── (T) b [waiting 1s on task 'shared']
    └── (T) shared (shown above)
└── (T) c [waiting 1s on task 'inner']
    └── (T) inner [waiting 1s on sleep]
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}
