package asyncio

// Edge cases of the diagnostics API under hostile use: snapshots while
// tasks come and go, observers switched on and off mid-flight, cycles,
// odd names, closed loops, counters after panics, runtime/trace restarted.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio/internal/hooks"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// oddNames are task names meant to upset renderings and JSON.
var oddNames = []string{
	`it's "quoted"`,
	"new\nline\n└── (T) forged [running]",
	"tab\tand\x1b[31mescape",
	"ünïcødé 日本語 🎉",
	"\u202eevil-bidi",
	strings.Repeat("long-", 1<<14),
}

// stateRank is the snapshot's documented order: running and ready first,
// then waiting ones (created in between).
func stateRank(s string) int {
	switch s {
	case "running":
		return 0
	case "ready":
		return 1
	case "created":
		return 2
	case "waiting":
		return 3
	}
	return -1
}

// checkSnapshotInvariants checks what every snapshot of a live loop must
// satisfy, whatever happens around it.
func checkSnapshotInvariants(t *testing.T, where string, s *LoopSnapshot, fromCallback bool) {
	t.Helper()
	if s.Closed || s.Blocked {
		t.Errorf("%s: Closed %v Blocked %v on a live loop", where, s.Closed, s.Blocked)
		return
	}
	sum := 0
	for _, n := range s.Summary {
		sum += n
	}
	if sum != s.Stats.Tasks {
		t.Errorf("%s: Summary counts %d tasks, Stats.Tasks %d", where, sum, s.Stats.Tasks)
	}
	if len(s.Tasks)+s.Omitted != s.Stats.Tasks {
		t.Errorf("%s: %d tasks + %d omitted != Stats.Tasks %d", where, len(s.Tasks), s.Omitted, s.Stats.Tasks)
	}
	ids := map[string]bool{}
	readyish := 0
	for i, ti := range s.Tasks {
		if ids[ti.ID] {
			t.Errorf("%s: duplicate id %s", where, ti.ID)
		}
		ids[ti.ID] = true
		if stateRank(ti.State) < 0 {
			t.Errorf("%s: task %q in unknown state %q", where, ti.Name, ti.State)
		}
		if i > 0 {
			prev := s.Tasks[i-1]
			if stateRank(prev.State) > stateRank(ti.State) {
				t.Errorf("%s: %q (%s) listed before %q (%s)", where, prev.Name, prev.State, ti.Name, ti.State)
			}
			if prev.State == "waiting" && ti.State == "waiting" && prev.Waiting < ti.Waiting {
				t.Errorf("%s: %q waits %v, listed before %q waiting longer (%v)", where, prev.Name, prev.Waiting, ti.Name, ti.Waiting)
			}
		}
		if ti.State == "waiting" && (ti.Awaits == "" || ti.AwaitsID == "" || ti.Waiting < 0) {
			t.Errorf("%s: waiting task %q: awaits %q id %q for %v", where, ti.Name, ti.Awaits, ti.AwaitsID, ti.Waiting)
		}
		if ti.State != "waiting" && (ti.Awaits != "" || ti.Waiting != 0) {
			t.Errorf("%s: %s task %q awaits %q for %v", where, ti.State, ti.Name, ti.Awaits, ti.Waiting)
		}
		if ti.Cancelling != len(ti.CancelRequests) {
			t.Errorf("%s: %q cancelling %d with %d requests recorded (no Uncancel in this test)", where, ti.Name, ti.Cancelling, len(ti.CancelRequests))
		}
		if ti.State == "ready" || ti.State == "created" {
			readyish++
		}
		if fromCallback && ti.State == "running" {
			t.Errorf("%s: %q running in a snapshot taken from a callback", where, ti.Name)
		}
	}
	if s.Omitted == 0 {
		for _, ti := range s.Tasks {
			for _, a := range ti.AwaitedBy {
				if !ids[a.ID] {
					t.Errorf("%s: %q awaited by %s (%q), which is not a task of the loop", where, ti.Name, a.ID, a.Name)
				}
			}
		}
	}
	if fromCallback && readyish > s.Stats.Ready {
		t.Errorf("%s: %d tasks ready or created but %d entries in the ready queue", where, readyish, s.Stats.Ready)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("%s: json: %v", where, err)
	}
	var b strings.Builder
	if err := s.WriteTree(&b); err != nil {
		t.Errorf("%s: WriteTree: %v", where, err)
	}
	if err := s.WritePS(&b); err != nil {
		t.Errorf("%s: WritePS: %v", where, err)
	}
	if _, err := s.Trees(); err != nil {
		t.Errorf("%s: Trees: %v (no cycle in this test)", where, err)
	}
}

// Snapshots taken from timer callbacks and from a task, while tasks finish,
// get cancelled, swallow cancellations and get created, all satisfy the
// snapshot's documented invariants; a task's waiting time is exact on
// virtual time.
func TestDiagEdge_SnapshotInvariantsWhileTasksComeAndGo(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	snaps := 0
	main := startTask(l, "main", func(tk *T) error {
		long := startTask(tk, "long-sleeper", func(tk *T) error { return Sleep(tk, time.Hour) })
		var all []*Task[struct{}]
		for i := range 12 {
			i := i
			d := time.Duration(i+1) * 70 * time.Millisecond
			var fn func(tk *T) error
			switch i % 4 {
			case 0: // finishes by itself
				fn = func(tk *T) error { return Sleep(tk, d) }
			case 1: // cancelled by a timer
				fn = func(tk *T) error { return Sleep(tk, time.Hour) }
			case 2: // swallows its cancellation, sleeps on, returns nil
				fn = func(tk *T) error {
					if err := Sleep(tk, time.Hour); err != nil {
						return Sleep(tk, d)
					}
					return nil
				}
			case 3: // awaits another task, and spawns a child
				fn = func(tk *T) error {
					c := startTask(tk, fmt.Sprint("child", i), func(tk *T) error { return Sleep(tk, d) })
					return tk.Await(c)
				}
			}
			x := startTask(tk, fmt.Sprint("t", i), fn)
			all = append(all, x)
			if i%4 == 1 || i%4 == 2 {
				l.CallLater(d, func() { x.Cancel(fmt.Sprint("stop ", i)) })
			}
		}
		for k := 1; k <= 30; k++ {
			at := time.Duration(k) * 35 * time.Millisecond
			l.CallLater(at, func() {
				snaps++
				for _, max := range []int{-1, 3} {
					s := Snapshot(l, SnapshotOptions{MaxTasks: max})
					checkSnapshotInvariants(t, fmt.Sprintf("at %v max %d", at, max), s, true)
					if max < 0 {
						if ti := byName(s)["long-sleeper"]; ti.State != "waiting" || ti.Waiting != at {
							t.Errorf("at %v: long-sleeper %s for %v; want waiting for %v", at, ti.State, ti.Waiting, at)
						}
					}
				}
			})
		}
		for range 40 {
			if err := Sleep(tk, 25*time.Millisecond); err != nil {
				return err
			}
			checkSnapshotInvariants(t, fmt.Sprintf("from main at %v", l.Time()), Snapshot(tk, SnapshotOptions{MaxTasks: -1}), false)
		}
		awaitAll(tk, all...)
		long.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(long)
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if snaps != 30 {
		t.Errorf("%d snapshot callbacks ran, want 30", snaps)
	}
	if s := l.Stats(); s.Tasks != 0 {
		t.Errorf("Stats.Tasks %d after every task finished", s.Tasks)
	}
}

// Fixed (was BUG): TaskInfo.State says a task is "ready" when it is queued
// to run. A snapshot taken inside an eager first step (WithEagerStart)
// showed the creator, which is inside CreateTask mid-step and queued
// nowhere, as "ready" while the ready queue was empty (taskState saw
// started && futWaiter == nil). Its step is in progress: it is "running",
// as TaskInfo.State now documents; a task that yielded and is queued
// meanwhile is still "ready".
func TestDiagEdge_EagerCreatorIsNotQueued(t *testing.T) {
	var snap *LoopSnapshot
	runNamed(t, func(tk *T) error {
		done := false
		q := startTask(tk, "queued", func(tk *T) error {
			for !done {
				if err := Sleep(tk, 0); err != nil {
					return err
				}
			}
			return nil
		})
		if err := Sleep(tk, 0); err != nil { // q starts, yields, and is queued behind main
			return err
		}
		e := CreateTask(tk, func(c *T) (int, error) {
			snap = Snapshot(c, SnapshotOptions{})
			return 0, nil
		}, WithEagerStart(), WithName("eager"))
		done = true
		if _, err := e.Await(tk); err != nil {
			return err
		}
		return tk.Await(q)
	})
	m := byName(snap)
	for name, want := range map[string]string{"eager": "running", "main": "running", "queued": "ready"} {
		if got := m[name].State; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if snap.Stats.Ready != 1 {
		t.Errorf("Stats.Ready %d, want 1 (queued's step)", snap.Stats.Ready)
	}
	if len(snap.Tasks) != 3 || snap.Tasks[2].Name != "queued" {
		var names []string
		for _, ti := range snap.Tasks {
			names = append(names, ti.Name+" "+ti.State)
		}
		t.Errorf("order %q: want the two running tasks first, then the ready one", names)
	}
}

// Fixed (was BUG): LoopStats.StepDurations counts steps while step timing
// is on; README "Loop metrics and hooks" says WithStepTiming adds "a
// step-duration histogram". With WithStepTiming on for the whole run, a
// step that called SetSlowCallbackDuration or SetDebug was not counted:
// settingsChanged built a fresh timingObserver with empty starts, so that
// step's stepEnded found nothing and dropped it. settingsChanged now keeps
// the timing observer while timing stays on.
func TestDiagEdge_StepTimingSurvivesSettingsChanges(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithStepTiming())
	defer mustClose(t, l)
	main := startTask(l, "main", func(tk *T) error {
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		l.SetSlowCallbackDuration(time.Hour)
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		l.SetDebug(true)
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		l.SetDebug(false)
		return Sleep(tk, 0)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	var timed uint64
	for _, n := range s.StepDurations {
		timed += n
	}
	if timed != s.Steps {
		t.Errorf("WithStepTiming on throughout: %d steps in StepDurations, Steps %d", timed, s.Steps)
	}
}

// Fixed (was BUG): diag_trace.go and README ("While runtime/trace runs,
// whatever the options, each task is a trace task ... its name logged
// under asyncio.name"; "Tasks started before tracing began get their trace
// task at their next step"). When tracing stopped and started again, a
// task alive across both sessions kept the trace task of the first one
// (traceStepStart makes one only when d.traceTask is nil, and nothing
// cleared it when tracing stopped): the second trace had no task for it
// and not its name. settingsChanged now drops the tasks' trace state when
// it sees tracing stop.
func TestDiagEdge_TraceRestartedSeesLiveTasks(t *testing.T) {
	const name = "persistent-worker-7f3a"
	var first, second bytes.Buffer
	runVirtual(t, func(tk *T) error {
		stop := false
		w := startTask(tk, name, func(tk *T) error {
			for !stop {
				if err := Sleep(tk, time.Millisecond); err != nil {
					return err
				}
			}
			return nil
		})
		if err := Sleep(tk, 0); err != nil { // w starts before any tracing
			return err
		}
		for _, buf := range []*bytes.Buffer{&first, &second} {
			if err := trace.Start(buf); err != nil {
				return err
			}
			err := Sleep(tk, 5*time.Millisecond) // w steps several times
			trace.Stop()
			if err != nil {
				return err
			}
			if err := Sleep(tk, 5*time.Millisecond); err != nil { // untraced
				return err
			}
		}
		stop = true
		return tk.Await(w)
	})
	if !bytes.Contains(first.Bytes(), []byte(name)) {
		t.Fatalf("first trace has no %q", name)
	}
	if !bytes.Contains(second.Bytes(), []byte("asyncio.step")) {
		t.Fatalf("second trace has no asyncio.step region")
	}
	if !bytes.Contains(second.Bytes(), []byte(name)) {
		t.Errorf("second trace (tracing restarted) has no trace task named %q for a task that stepped in it", name)
	}
}

// Debug mode switched on and off while tasks are mid-flight: only the
// tasks whose first step ran in debug mode have a goroutine, a stack and a
// creator; the note counts the others; the observers go away again.
func TestDiagEdge_DebugToggledMidFlight(t *testing.T) {
	var snap *LoopSnapshot
	var obsAfter observer
	var line int
	runNamed(t, func(tk *T) error {
		l := tk.Loop()
		sleeper := func(tk *T) error { return Sleep(tk, time.Hour) }
		early := startTask(tk, "early", sleeper)
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		l.SetDebug(true)
		mid := startTask(tk, "mid", func(tk *T) error {
			line = nextLine()
			return Sleep(tk, time.Hour)
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		l.SetDebug(false)
		obsAfter = l.obs
		late := startTask(tk, "late", sleeper)
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		for _, x := range []*Task[struct{}]{early, mid, late} {
			x.Cancel()
		}
		awaitAll(tk, early, mid, late)
		return nil
	})
	if obsAfter != nil {
		t.Errorf("observers left after debug mode off: %q", observerNames(obsAfter))
	}
	m := byName(snap)
	for _, n := range []string{"main", "early", "late"} {
		if ti := m[n]; ti.Goroutine != 0 || len(ti.Stack) != 0 || ti.Creator != "" {
			t.Errorf("%s (first step outside debug mode): goroutine %d, %d frames, creator %q", n, ti.Goroutine, len(ti.Stack), ti.Creator)
		}
	}
	mid := m["mid"]
	if mid.Goroutine == 0 || !strings.HasPrefix(mid.Creator, "main (0x") {
		t.Errorf("mid: goroutine %d, creator %q", mid.Goroutine, mid.Creator)
	}
	found := false
	for _, f := range mid.Stack {
		if f.File == thisEdgeFile && f.Line == line {
			found = true
		}
	}
	if !found {
		t.Errorf("mid's stack has no frame at %s:%d: %v", thisEdgeFile, line, mid.Stack)
	}
	if !strings.Contains(strings.Join(snap.Notes, "\n"), "3 tasks started before stacks were recorded") {
		t.Errorf("notes %q, want the 3 tasks without a stack counted", snap.Notes)
	}
}

var thisEdgeFile = func() string {
	_, f, _, _ := runtime.Caller(0)
	return f
}()

// A snapshot full of odd names and every optional field survives a JSON
// round trip unchanged, renders the same afterwards, and no name breaks
// the table's or the tree's lines.
func TestDiagEdge_JSONRoundTripOddNames(t *testing.T) {
	var snap *LoopSnapshot
	runNamed(t, func(tk *T) error {
		tk.Loop().SetDebug(true) // main has no stack: a note
		var ts []*Task[struct{}]
		for _, n := range oddNames {
			ts = append(ts, startTask(tk, n, func(tk *T) error { return Sleep(tk, time.Hour) }))
		}
		g := startTask(tk, "gather\"er\n", func(tk *T) error {
			_, err := Gather[struct{}](tk, ts[0], ts[1]).Await(tk)
			return err
		})
		swallower := startTask(tk, "swallower", func(tk *T) error {
			if err := Sleep(tk, time.Hour); err != nil {
				return Sleep(tk, time.Hour) // cleanup after the delivery
			}
			return nil
		})
		if err := Sleep(tk, 1500*time.Millisecond); err != nil {
			return err
		}
		ts[2].Cancel("why?\n\"because\"")
		swallower.Cancel("go away")
		if err := Sleep(tk, 0); err != nil { // the swallower gets it
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{MaxTasks: 6})
		for _, x := range append(ts, g, swallower) {
			x.Cancel()
		}
		awaitAll(tk, append(ts, g, swallower)...)
		return nil
	})
	if snap.Omitted == 0 || len(snap.Notes) == 0 || len(snap.Summary) == 0 {
		t.Fatalf("snapshot without Omitted/Notes/Summary to round-trip: %+v", snap)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back LoopSnapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(snap, &back, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("JSON round trip (-before +after):\n%s", d)
	}
	render := func(s *LoopSnapshot) (tree, ps string) {
		var a, c strings.Builder
		if err := s.WriteTree(&a); err != nil {
			t.Fatal(err)
		}
		if err := s.WritePS(&c); err != nil {
			t.Fatal(err)
		}
		return a.String(), c.String()
	}
	tree, ps := render(snap)
	tree2, ps2 := render(&back)
	if tree != tree2 || ps != ps2 {
		t.Errorf("renderings differ after the JSON round trip")
	}
	rows := 0
	for _, ti := range snap.Tasks {
		rows += max(1, len(ti.AwaitedBy))
	}
	footer := len(snap.Notes)
	if snap.Omitted > 0 {
		footer++
	}
	if got, want := strings.Count(ps, "\n"), 2+rows+footer; got != want {
		t.Errorf("ps: %d lines, want header, rule, %d rows and %d footer lines", got, rows, footer)
	}
	for _, line := range strings.Split(tree+ps, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " │├└─"), "(T) forged") || strings.ContainsRune(line, '\x1b') {
			t.Errorf("a name forged a line or sent an escape: %q", line)
		}
	}
}

// A cycle of tasks awaiting each other (a deadlock) under a root task:
// the tree is cut where it closes and lists the cycle, Trees reports it,
// the call graph is cut, and all of it terminates with odd names.
func TestDiagEdge_AwaitCycleRendered(t *testing.T) {
	l := NewTestLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var a, b, c *Task[struct{}]
	await := func(x **Task[struct{}]) func(tk *T) error {
		return func(tk *T) error {
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			return tk.Await(*x)
		}
	}
	a = startTask(l, oddNames[0], await(&b))
	b = startTask(l, oddNames[1], await(&c))
	c = startTask(l, oddNames[2], await(&a))
	root := startTask(l, "root", await(&a))
	var graph string
	var cbSnap *LoopSnapshot
	l.CallLater(time.Second, func() {
		graph = FormatCallGraph(CaptureCallGraph(a))
		cbSnap = Snapshot(l, SnapshotOptions{})
	})
	err := l.RunUntilComplete(root)
	var de *DeadlockError
	if !errors.As(err, &de) {
		t.Fatalf("RunUntilComplete: %v, want a *DeadlockError", err)
	}
	mustClose(t, l)
	for _, s := range []*LoopSnapshot{de.Snapshot, cbSnap} {
		cycles := s.AwaitCycles()
		if len(cycles) != 1 || len(cycles[0]) != 4 || cycles[0][0] != cycles[0][3] {
			t.Errorf("cycles %v, want one of three tasks, closed", cycles)
		}
		var ce *AwaitCycleError
		if _, err := s.Trees(); !errors.As(err, &ce) || !strings.Contains(ce.Error(), "cycle: ") {
			t.Errorf("Trees: %v, want an *AwaitCycleError", err)
		}
		var w strings.Builder
		if err := s.WriteTree(&w); err != nil {
			t.Fatal(err)
		}
		tree := w.String()
		if n := strings.Count(tree, "\n"); n > 8 {
			t.Errorf("tree of 4 tasks has %d lines:\n%s", n, tree)
		}
		if !strings.Contains(tree, "(cycle: awaits itself through the tasks above)") ||
			!strings.Contains(tree, `cycle: `) || strings.Contains(tree, "\n└── (T) forged") {
			t.Errorf("tree:\n%s", tree)
		}
	}
	if strings.Count(graph, "* Task(") != 4 {
		t.Errorf("call graph of a cycle under a root: want 4 task nodes (a, c, b, root):\n%s", graph)
	}
	if !strings.Contains(de.Error(), "cycle: ") {
		t.Errorf("deadlock message lists no cycle:\n%s", de.Error())
	}
}

// Hand-built snapshots with hostile edges (a task awaiting itself, an
// awaiter outside the snapshot, duplicate edges) render without looping.
func TestDiagEdge_HandBuiltHostileSnapshot(t *testing.T) {
	s := &LoopSnapshot{Tasks: []TaskInfo{
		{ID: "0x1", Name: "self", AwaitedBy: []Awaiter{{ID: "0x1", Name: "self"}}},
		{ID: "0x2", Name: "orphan", AwaitedBy: []Awaiter{{ID: "0xdead"}}},
		{ID: "0x3", Name: "twice", AwaitedBy: []Awaiter{{ID: "0x2", Name: "orphan"}, {ID: "0x2", Name: "orphan"}, {ID: "0x1", Name: "self"}}},
	}}
	var tree, ps strings.Builder
	if err := s.WriteTree(&tree); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePS(&ps); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ps.String(), "Unknown") {
		t.Errorf("ps: an unknown awaiter is not named Unknown:\n%s", ps.String())
	}
	if n := strings.Count(tree.String(), "\n"); n > 10 {
		t.Errorf("tree of 3 tasks has %d lines:\n%s", n, tree.String())
	}
	c := s.AwaitCycles()
	if len(c) != 1 || !cmp.Equal(c[0], []string{"0x1", "0x1"}) {
		t.Errorf("cycles %v, want [[0x1 0x1]]", c)
	}
	if _, err := s.Trees(); err == nil {
		t.Errorf("Trees of a self-awaiting task: no error")
	}
}

// Edges added by hand between futures that form cycles (and a self edge)
// are cut in call graphs and snapshots; completing a future removes its
// edges; Discard removes one.
func TestDiagEdge_FutureEdgeCycles(t *testing.T) {
	var shapes [][]string
	var via []Awaiter
	runNamed(t, func(tk *T) error {
		f1, f2 := NewFuture[int](tk), NewFuture[int](tk)
		FutureAddToAwaitedBy(f1, f2)
		FutureAddToAwaitedBy(f2, f1)
		FutureAddToAwaitedBy(f1, f1)
		FutureAddToAwaitedBy(f2, tk)
		shapes = append(shapes, graphShape(CaptureCallGraph(f1)))
		x := startTask(tk, "x", func(tk *T) error { return Sleep(tk, time.Hour) })
		FutureAddToAwaitedBy(x, f1)
		via = byName(Snapshot(tk, SnapshotOptions{}))["x"].AwaitedBy
		FutureDiscardFromAwaitedBy(f2, tk)
		shapes = append(shapes, graphShape(CaptureCallGraph(f1)))
		if err := f2.SetResult(2); err != nil {
			return err
		}
		if err := f1.SetResult(1); err != nil {
			return err
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		shapes = append(shapes, graphShape(CaptureCallGraph(f1)))
		x.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(x)
		return nil
	})
	want := [][]string{{"future <- future <- main"}, {"future <- future"}, {"future"}}
	if d := cmp.Diff(want, shapes); d != "" {
		t.Errorf("graphs (-want +got):\n%s", d)
	}
	if len(via) != 1 || via[0].Name != "main" || !cmp.Equal(via[0].Via, []string{"future", "future"}) {
		t.Errorf("x awaited by %+v, want main via [future future]", via)
	}
}

// Callbacks that panic are counted as callbacks, and step timing goes on
// afterwards; a task that panics is counted as a step and is gone; after
// Close, nothing is left counted and the counters did not run backwards.
func TestDiagEdge_StatsAfterPanicsAndClose(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithStepTiming())
	reports := 0
	l.SetExceptionHandler(func(*Loop, ExceptionContext) { reports++ })
	before := l.Stats()
	ran := 0
	for i := range 5 {
		if i%2 == 1 {
			l.CallSoon(func() { ran++; panic("boom") })
		} else {
			// Each of these lasts until the clock has moved, so the
			// timed callback time is > 0 whatever the clock's
			// resolution (no assumption on how long a callback takes).
			l.CallSoon(func() { ran++; untilClockMoves() })
		}
	}
	runOne(t, l)
	after := l.Stats()
	if ran != 5 || reports != 2 {
		t.Errorf("%d callbacks ran, %d reports; want 5, 2", ran, reports)
	}
	if got := after.Callbacks - before.Callbacks; got != 5 {
		t.Errorf("Callbacks went up by %d, want 5", got)
	}
	if after.CallbackTime <= 0 {
		t.Errorf("CallbackTime %v with step timing on", after.CallbackTime)
	}
	if o, ok := l.obs.(*timingObserver); !ok || !o.callback.IsZero() {
		t.Errorf("timing observer %T left mid-callback after a panic", l.obs)
	}
	//asynciovet:ignore unawaitedtask the task panics unawaited on purpose: its counters are under test
	p := startTask(l, "panicker", func(tk *T) error { panic("step boom") })
	runOne(t, l)
	s := l.Stats()
	var timed uint64
	for _, n := range s.StepDurations {
		timed += n
	}
	var pe *PanicError
	if !p.Done() || !errors.As(p.Err(), &pe) || s.Tasks != 0 || s.Steps != 1 || timed != 1 {
		t.Errorf("after a panicking step: done %v err %v, Tasks %d Steps %d timed %d", p.Done(), p.Err(), s.Tasks, s.Steps, timed)
	}
	// Queued work that Close drops.
	l.CallSoon(func() {})
	l.CallLater(time.Hour, func() {})
	l.CallLater(time.Hour, func() {}).Cancel()
	startTask(l, "never-run", func(tk *T) error { return nil })
	mustClose(t, l)
	c := l.Stats()
	if c.Tasks != 0 || c.Ready != 0 || c.Timers != 0 || c.LiveTimers != 0 || c.CancelledTimers != 0 {
		t.Errorf("after Close: %+v", c)
	}
	if c.Callbacks != s.Callbacks || c.Steps != s.Steps || c.Iterations != s.Iterations {
		t.Errorf("counters changed by Close: callbacks %d→%d steps %d→%d iterations %d→%d",
			s.Callbacks, c.Callbacks, s.Steps, c.Steps, s.Iterations, c.Iterations)
	}
}

// untilClockMoves returns once time.Now has moved (monotonic reading),
// so the caller's duration, as the step-timing observer measures it
// (time.Now before, time.Since after), is > 0.
func untilClockMoves() {
	start := time.Now()
	for time.Since(start) <= 0 {
		runtime.Gosched()
	}
}

// Timers: LiveTimers + CancelledTimers is Timers at every point while
// sleeping tasks are cancelled in bulk.
func TestDiagEdge_TimerCountsWhileCancelling(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		l := tk.Loop()
		var ts []*Task[struct{}]
		for i := range 200 {
			ts = append(ts, startTask(tk, fmt.Sprint("s", i), func(tk *T) error { return Sleep(tk, time.Duration(i+1)*time.Second) }))
		}
		check := func(where string) {
			s := l.Stats()
			if s.LiveTimers+s.CancelledTimers != s.Timers || s.LiveTimers < 0 || s.CancelledTimers < 0 {
				t.Errorf("%s: live %d + cancelled %d != timers %d", where, s.LiveTimers, s.CancelledTimers, s.Timers)
			}
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		check("all sleeping")
		for i, x := range ts {
			if i%3 != 0 {
				x.Cancel()
			}
		}
		check("after Cancel")
		for range 3 {
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			check("after the cancellations ran")
		}
		if s := l.Stats(); s.Tasks != 1+67 {
			t.Errorf("Stats.Tasks %d, want main and 67 sleepers", s.Tasks)
		}
		for _, x := range ts {
			x.Cancel()
		}
		awaitAll(tk, ts...)
		check("all done")
		return nil
	})
}

// The swallowed-cancellation check in debug mode: a Timeout's own
// cancellation, retried at the same place, is not a swallow; cleanup then
// a nil return is; Uncancel is not; a loop ignoring the error is, once;
// a wrapped error returned is not. The snapshot shows the delivery while
// the cleanup runs.
func TestDiagEdge_SwallowedCancellationCases(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	got := map[string][]string{}
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		var se *SwallowedCancelError
		if errors.As(c.Err, &se) {
			got[se.Task] = append(got[se.Task], se.Then)
			return
		}
		t.Errorf("unexpected report: %s: %v", c.Message, c.Err)
	})
	var snap *LoopSnapshot
	main := startTask(l, "main", func(tk *T) error {
		tl := startTask(tk, "timeout-loop", func(tk *T) error {
			for range 3 {
				err := Timeout(tk, time.Second, func(*TimeoutScope) error { return Sleep(tk, time.Hour) })
				if !errors.Is(err, ErrTimeout) {
					return err
				}
			}
			return nil
		})
		cleanup := startTask(tk, "cleanup-then-nil", func(tk *T) error {
			if err := Sleep(tk, time.Hour); err != nil {
				//asynciovet:ignore droppedcancel the swallow is under test
				_ = Sleep(tk, 10*time.Second)
				return nil
			}
			return nil
		})
		unc := startTask(tk, "uncancel", func(tk *T) error {
			if err := Sleep(tk, time.Hour); err != nil {
				tk.Uncancel()
				return Sleep(tk, 10*time.Second)
			}
			return nil
		})
		ign := startTask(tk, "ignore-loop", func(tk *T) error {
			for range 3 {
				//asynciovet:ignore droppedcancel the swallow is under test
				_ = Sleep(tk, time.Second)
			}
			return nil
		})
		wrap := startTask(tk, "wrapped", func(tk *T) error {
			if err := Sleep(tk, time.Hour); err != nil {
				return fmt.Errorf("stopped: %w", err)
			}
			return nil
		})
		if err := Sleep(tk, 100*time.Millisecond); err != nil {
			return err
		}
		for _, x := range []*Task[struct{}]{cleanup, unc, ign, wrap} {
			x.Cancel()
		}
		if err := Sleep(tk, 100*time.Millisecond); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		awaitAll(tk, tl, cleanup, unc, ign, wrap)
		if err := tl.Err(); err != nil {
			t.Errorf("timeout-loop: %v", err)
		}
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"cleanup-then-nil": {"finished with a nil error"},
		"ignore-loop":      {"awaited again at the same place"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("swallow reports (-want +got):\n%s", d)
	}
	m := byName(snap)
	if m["cleanup-then-nil"].CancelDeliveredAt == nil {
		t.Errorf("cleanup-then-nil: no CancelDeliveredAt during its cleanup")
	}
	if m["uncancel"].CancelDeliveredAt != nil || m["timeout-loop"].CancelDeliveredAt != nil {
		t.Errorf("CancelDeliveredAt shown after Uncancel / for a Timeout's own cancellation: %v %v",
			m["uncancel"].CancelDeliveredAt, m["timeout-loop"].CancelDeliveredAt)
	}
}

// The cancellation tester's hook installed and removed while tasks are
// mid-flight: it sees suspensions only while installed, names the await
// in this file, and cancelling from it cancels the task at that await.
func TestDiagEdge_TesterHookMidFlight(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var seen []string
	cancelled := false
	var obsAfter observer
	var werr error
	callsAtRemoval := 0
	main := startTask(l, "main", func(tk *T) error {
		w := startTask(tk, "w", func(tk *T) error {
			for range 5 {
				if err := Sleep(tk, time.Second); err != nil {
					return err
				}
			}
			return nil
		})
		if err := Sleep(tk, 1500*time.Millisecond); err != nil {
			return err
		}
		hooks.SetSuspendHook(l, func(st *T, where func() string) {
			seen = append(seen, st.Name()+"@"+where())
			if st.Name() == "w" && !cancelled {
				cancelled = true
				st.Cancel("from the hook")
			}
		})
		werr = tk.Await(w)
		hooks.SetSuspendHook[Loop, T](l, nil)
		obsAfter = l.obs
		callsAtRemoval = len(seen)
		return Sleep(tk, time.Second)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	var ce *CancelledError
	if !errors.As(werr, &ce) || ce.Msg != "from the hook" {
		t.Errorf("w ended with %v, want CancelledError(\"from the hook\")", werr)
	}
	if obsAfter != nil || len(seen) != callsAtRemoval {
		t.Errorf("after removing the hook: observers %q, %d more calls", observerNames(obsAfter), len(seen)-callsAtRemoval)
	}
	if len(seen) != 2 || !strings.HasPrefix(seen[0], "main@") || !strings.HasPrefix(seen[1], "w@") ||
		!strings.Contains(seen[1], "diag_edges_test.go") {
		t.Errorf("hook saw %q; want main's await then w's, in this file", seen)
	}
}

// SnapshotThreadsafe on a loop that is not running: callers with the same
// options share one request, one with other options is told it is busy at
// once, Close answers the queued request with a closed snapshot at once,
// and afterwards every call is answered closed at once; WriteDump too.
func TestDiagEdge_SnapshotThreadsafeCloseWhileQueued(t *testing.T) {
	l := NewTestLoop()
	results := make(chan *LoopSnapshot, 2)
	for range 2 {
		go func() { results <- l.SnapshotThreadsafe(time.Hour, SnapshotOptions{}) }()
	}
	guard := time.Now().Add(10 * time.Second) // hang guard only
	for {
		l.snapReq.mu.Lock()
		n := 0
		if r := l.snapReq.cur; r != nil {
			n = r.waiters
		}
		l.snapReq.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(guard) {
			t.Fatal("the two requests never joined")
		}
		runtime.Gosched()
	}
	busy := l.SnapshotThreadsafe(time.Hour, SnapshotOptions{MaxTasks: 5})
	if !busy.Blocked || !busy.Busy || busy.Closed || len(busy.Notes) != 1 {
		t.Errorf("other options while one is queued: %+v", busy)
	}
	mustClose(t, l)
	var got []*LoopSnapshot
	for range 2 {
		select {
		case s := <-results:
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not answer the queued snapshot request")
		}
	}
	if got[0] != got[1] || !got[0].Closed || got[0].Blocked {
		t.Errorf("queued callers after Close: %+v, %+v; want one shared Closed snapshot", got[0], got[1])
	}
	done := make(chan string, 1)
	go func() {
		var b strings.Builder
		_ = l.WriteDump(&b, time.Hour)
		if s := l.SnapshotThreadsafe(time.Hour, SnapshotOptions{MaxTasks: 5}); !s.Closed {
			b.WriteString("not closed")
		}
		done <- b.String()
	}()
	select {
	case out := <-done:
		if !strings.HasPrefix(out, "(loop closed: no tasks)\n") || strings.Contains(out, "not closed") {
			t.Errorf("dump of a closed loop:\n%s", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SnapshotThreadsafe on a closed loop waited out its timeout")
	}
	if n := l.snapReq.taken.Load(); n != 0 {
		t.Errorf("%d snapshots taken for a loop that never ran", n)
	}
	if s := Snapshot(l, SnapshotOptions{}); !s.Closed || len(s.Tasks) != 0 || s.Stats != (LoopStats{}) {
		t.Errorf("Snapshot of a closed loop: %+v", s)
	}
}

// A request abandoned on a stopped loop is skipped when the loop runs
// again: no snapshot is taken for it; a request while it runs, from
// another goroutine, sees tasks that finished in between gone.
func TestDiagEdge_SnapshotThreadsafeBetweenRuns(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	s := l.SnapshotThreadsafe(time.Millisecond, SnapshotOptions{})
	if !s.Blocked || s.Busy || len(s.Tasks) != 0 {
		t.Errorf("not running: %+v", s)
	}
	quick := startTask(l, "quick", func(tk *T) error { return nil })
	var fromOther *LoopSnapshot
	main := startTask(l, "main", func(tk *T) error {
		if err := tk.Await(quick); err != nil {
			return err
		}
		// Wait on the loop, with the loop running, for the answer. The
		// future is completed from other goroutines through
		// CallSoonThreadsafe, which a loop on virtual time does not wait
		// for unless told (WithVirtualTime, ExpectExternal): without
		// ExpectExternal, RunUntilComplete rightly reports a deadlock.
		release := l.ExpectExternal()
		got := make(chan *LoopSnapshot)
		go func() { got <- l.SnapshotThreadsafe(time.Hour, SnapshotOptions{MaxTasks: -1}) }()
		f := NewFuture[struct{}](tk)
		go func() {
			defer release()
			fromOther = <-got
			_, _ = l.CallSoonThreadsafe(func() { _ = f.SetResult(struct{}{}) })
		}()
		_, err := f.Await(tk)
		return err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if n := l.snapReq.taken.Load(); n != 1 {
		t.Errorf("%d snapshots taken; want 1 (the abandoned request skipped)", n)
	}
	if fromOther == nil || fromOther.Blocked || len(fromOther.Tasks) != 1 || fromOther.Tasks[0].Name != "main" ||
		fromOther.Tasks[0].State != "waiting" || fromOther.Tasks[0].Awaits != "future" {
		t.Errorf("snapshot from another goroutine: %+v", fromOther)
	}
}

// A task's cancel requests are its requests among the loop's last 1024
// (cancelLogSize), oldest first, with Cancelling counting them
// (TaskInfo.CancelRequests, DESIGN "Seeing inside the loop"). README's
// "the last 8, and a count" was a leftover of the per-task records the
// loop's ring replaced (commit 577a571), not a promise: the test first
// expected 8 from a task's 20 requests, and its worker returned at the
// 11th request (at 10.5s), so the snapshot at 30s had no worker at all.
// Here the worker swallows every request until told to stop; then another
// task's requests fill the rest of the ring and leave the worker's last 8.
// The request's time is exact on virtual time and a timer's request is by
// "callback".
func TestDiagEdge_CancelRequestsAmongLoopsLast1024(t *testing.T) {
	var snap, flooded *LoopSnapshot
	runNamed(t, func(tk *T) error {
		stop := false
		w := startTask(tk, "worker", func(tk *T) error {
			for {
				if err := Sleep(tk, time.Hour); err != nil && stop {
					return err
				}
			}
		})
		other := startTask(tk, "other", func(tk *T) error { return Sleep(tk, time.Hour) })
		l := tk.Loop()
		for i := range 20 {
			l.CallLater(time.Duration(i)*time.Second+500*time.Millisecond, func() { w.Cancel(fmt.Sprint("c", i)) })
		}
		if err := Sleep(tk, 30*time.Second); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		for range cancelLogSize - 8 {
			other.Cancel("flood")
		}
		flooded = Snapshot(tk, SnapshotOptions{})
		stop = true
		w.Cancel("stop")
		awaitAll(tk, w, other)
		return nil
	})
	for _, c := range []struct {
		name  string
		s     *LoopSnapshot
		first int // the first of the worker's requests still in the ring
	}{{"before the flood", snap, 0}, {"after the flood", flooded, 12}} {
		wi := byName(c.s)["worker"]
		if wi.State != "waiting" || wi.Cancelling != 20 {
			t.Errorf("%s: worker %q cancelling %d; want waiting, 20 requests counted", c.name, wi.State, wi.Cancelling)
		}
		reqs := wi.CancelRequests
		if len(reqs) != 20-c.first {
			t.Errorf("%s: %d requests recorded for the worker, want %d", c.name, len(reqs), 20-c.first)
			continue
		}
		for k, r := range reqs {
			i := c.first + k
			want := CancelRequest{By: "callback", Msg: fmt.Sprint("c", i), At: time.Duration(i)*time.Second + 500*time.Millisecond}
			if r != want {
				t.Errorf("%s: request %d: %+v, want %+v", c.name, k, r, want)
			}
		}
	}
	oi := byName(flooded)["other"]
	if oi.Cancelling != cancelLogSize-8 || len(oi.CancelRequests) != cancelLogSize-8 {
		t.Errorf("other: cancelling %d with %d requests recorded, want %d of each", oi.Cancelling, len(oi.CancelRequests), cancelLogSize-8)
	} else if r := oi.CancelRequests[0]; r.Msg != "flood" || !strings.HasPrefix(r.By, "task 'main' (0x") || r.At != 30*time.Second {
		t.Errorf("other: first request %+v, want flood by task 'main' at 30s", r)
	}
}
