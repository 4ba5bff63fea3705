package asyncio

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// nextLine returns the line after its caller's: put it right above an
// await to know the line the task suspends on.
func nextLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line + 1
}

// thisFile is this test file's path as frames report it.
var thisFile = func() string {
	_, f, _, _ := runtime.Caller(0)
	return f
}()

// runNamed runs main as task "main" on a virtual-time Run.
func runNamed(t *testing.T, main func(tk *T) error) {
	t.Helper()
	r := NewRunner(WithVirtualTime())
	if _, err := RunWith(r, func(tk *T) (struct{}, error) { return struct{}{}, main(tk) }, WithName("main")); err != nil {
		t.Fatalf("RunWith: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// byName indexes a snapshot's tasks by name.
func byName(s *LoopSnapshot) map[string]TaskInfo {
	m := map[string]TaskInfo{}
	for _, ti := range s.Tasks {
		m[ti.Name] = ti
	}
	return m
}

// Every state a task can be in, what each waiting task awaits and for how
// long (exact on virtual time), and the awaited-by edges through a gather.
func TestSnapshot_StatesAwaitsAndEdges(t *testing.T) {
	var snap *LoopSnapshot
	runNamed(t, func(tk *T) error {
		lk := NewLock()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = lk.Acquire(tk)
		q := NewQueue[int](0)
		a := startTask(tk, "sleeper", func(tk *T) error { return Sleep(tk, time.Hour) })
		b := startTask(tk, "locker", func(tk *T) error { return lk.Acquire(tk) })
		c := startTask(tk, "getter", func(tk *T) error { _, err := q.Get(tk); return err })
		g := startTask(tk, "gatherer", func(tk *T) error {
			_, err := Gather[struct{}](tk, a, b).Await(tk)
			return err
		})
		w := startTask(tk, "waiter", func(tk *T) error { return tk.Await(c) })
		if err := Sleep(tk, 2*time.Second); err != nil {
			return err
		}
		startTask(tk, "yielder", func(tk *T) error { return Sleep(tk, 0) })
		y := startTask(tk, "fresh", func(tk *T) error { return nil })
		_ = y
		snap = Snapshot(tk, SnapshotOptions{})
		for _, x := range []*Task[struct{}]{a, b, c, g, w} {
			x.Cancel()
		}
		return nil
	})
	got := map[string]string{}
	for name, ti := range byName(snap) {
		line := ti.State
		if ti.State == "waiting" {
			line += fmt.Sprintf(" on %s for %v", ti.Awaits, ti.Waiting)
		}
		for _, a := range ti.AwaitedBy {
			line += fmt.Sprintf("; awaited by %s via %v", a.Name, a.Via)
		}
		got[name] = line
	}
	want := map[string]string{
		"main":     "running",
		"sleeper":  "waiting on sleep for 2s; awaited by gatherer via [gather]",
		"locker":   "waiting on Lock.Acquire for 2s; awaited by gatherer via [gather]",
		"getter":   "waiting on Queue.Get for 2s; awaited by waiter via []",
		"gatherer": "waiting on gather for 2s",
		"waiter":   "waiting on task 'getter' for 2s",
		"yielder":  "created",
		"fresh":    "created",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("snapshot (-want +got):\n%s", d)
	}
	if snap.Time != 2*time.Second || snap.Stats.Tasks != 8 {
		t.Errorf("Time %v, Stats.Tasks %d; want 2s, 8", snap.Time, snap.Stats.Tasks)
	}
	// Running and ready tasks come first.
	if snap.Tasks[0].Name != "main" {
		t.Errorf("first task %q, want main", snap.Tasks[0].Name)
	}
}

// With WithTaskStacks a suspended task's stack starts with the library
// call it waits in, then the user's frame with the line of the await; the
// creator is recorded.
func TestSnapshot_StacksWithTaskStacks(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithTaskStacks())
	defer mustClose(t, l)
	var line int
	var snap *LoopSnapshot
	main := startTask(l, "main", func(tk *T) error {
		q := NewQueue[int](0)
		w := startTask(tk, "worker", func(tk *T) error {
			line = nextLine()
			_, err := q.Get(tk)
			return err
		})
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		w.Cancel()
		return nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	ti := byName(snap)["worker"]
	if len(ti.Stack) < 2 {
		t.Fatalf("worker stack %v, want the Queue.Get call and the test's frame", ti.Stack)
	}
	if fn := shortFunc(ti.Stack[0].Function); fn != "asyncio.(*Queue[...]).Get" {
		t.Errorf("stack[0] = %s, want asyncio.(*Queue[...]).Get", fn)
	}
	if f := ti.Stack[1]; f.File != thisFile || f.Line != line {
		t.Errorf("stack[1] = %s, want %s:%d", f, thisFile, line)
	}
	if ti.Goroutine == 0 || !strings.HasPrefix(ti.Creator, "main (0x") {
		t.Errorf("goroutine %d, creator %q; want a goroutine and main", ti.Goroutine, ti.Creator)
	}
	if len(snap.Notes) != 0 {
		t.Errorf("notes %q, want none", snap.Notes)
	}
}

// Without WithTaskStacks or debug mode a snapshot has no stacks and says
// why.
func TestSnapshot_WithoutStacksSaysWhy(t *testing.T) {
	var snap *LoopSnapshot
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "worker", func(tk *T) error { return Sleep(tk, time.Hour) })
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		w.Cancel()
		return nil
	})
	ti := byName(snap)["worker"]
	if ti.Stack != nil || ti.Goroutine != 0 || ti.Creator != "" {
		t.Errorf("worker: stack %v goroutine %d creator %q, want none", ti.Stack, ti.Goroutine, ti.Creator)
	}
	want := []string{"2 tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator"}
	if d := cmp.Diff(want, snap.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}

// A closed loop gives an empty snapshot, from the loop's goroutine and from
// any other.
func TestSnapshot_ClosedLoopIsEmpty(t *testing.T) {
	l := NewTestLoop()
	startTask(l, "never", func(tk *T) error { return nil })
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	mustClose(t, l)
	for _, s := range []*LoopSnapshot{Snapshot(l, SnapshotOptions{}), l.SnapshotThreadsafe(time.Hour, SnapshotOptions{})} {
		if !s.Closed || s.Blocked || len(s.Tasks) != 0 {
			t.Errorf("snapshot of a closed loop: %+v", s)
		}
		var b strings.Builder
		if err := s.WriteTree(&b); err != nil || b.String() != "(loop closed: no tasks)\n" {
			t.Errorf("tree %q, %v", b.String(), err)
		}
	}
}

// MaxTasks bounds the tasks described; Summary still counts them all.
func TestSnapshot_MaxTasksAndSummary(t *testing.T) {
	var snap *LoopSnapshot
	runVirtual(t, func(tk *T) error {
		var ts []*Task[struct{}]
		for i := range 10 {
			ts = append(ts, startTask(tk, fmt.Sprint("s", i), func(tk *T) error { return Sleep(tk, time.Duration(i+1)*time.Second) }))
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{MaxTasks: 3})
		for _, x := range ts {
			x.Cancel()
		}
		return nil
	})
	if len(snap.Tasks) != 3 || snap.Omitted != 8 {
		t.Errorf("%d tasks, %d omitted; want 3, 8", len(snap.Tasks), snap.Omitted)
	}
	want := map[string]int{"running": 1, "waiting: sleep": 10}
	if d := cmp.Diff(want, snap.Summary); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	var b strings.Builder
	_ = snap.WriteTree(&b)
	if !strings.Contains(b.String(), "... 8 more tasks not shown; all tasks: running 1; waiting: sleep 10;") {
		t.Errorf("tree footer missing:\n%s", b.String())
	}
}

// The snapshot is JSON with stable field names.
func TestSnapshot_JSON(t *testing.T) {
	var snap *LoopSnapshot
	runNamed(t, func(tk *T) error {
		w := startTask(tk, "worker", func(tk *T) error { return Sleep(tk, time.Hour) })
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		w.Cancel("bye")
		snap = Snapshot(tk, SnapshotOptions{})
		return nil
	})
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Time  int64 `json:"time_ns"`
		Tasks []struct {
			Name           string `json:"name"`
			State          string `json:"state"`
			Cancelling     int    `json:"cancelling"`
			CancelRequests []struct {
				By  string `json:"by"`
				Msg string `json:"msg"`
				At  int64  `json:"at_ns"`
			} `json:"cancel_requests"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v", back)
	want := "{Time:1000000000 Tasks:[{Name:main State:running Cancelling:0 CancelRequests:[]} {Name:worker State:ready Cancelling:1 CancelRequests:[{By:task 'main' (" +
		byName(snap)["main"].ID + ") Msg:bye At:1000000000}]}]}"
	if got != want {
		t.Errorf("JSON round trip\n got %s\nwant %s", got, want)
	}
}

// Who cancelled whom: the requesting task or "callback", the message, the
// loop time; in debug mode the requesting frame.
func TestCancelRequests_Recorded(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	var line int
	var snap *LoopSnapshot
	main := startTask(l, "main", func(tk *T) error {
		w := startTask(tk, "worker", func(tk *T) error {
			err := Sleep(tk, time.Hour)
			//asynciovet:ignore droppedcancel the task is cancelled here on purpose: the test reads the cancel records
			_ = Sleep(tk, time.Hour) // cancelled again below
			//asynciovet:ignore droppedcancel the task is cancelled here on purpose: the test reads the cancel records
			_ = Sleep(tk, time.Hour) // and once more after the snapshot
			return err
		})
		if err := Sleep(tk, time.Second); err != nil {
			return err
		}
		line = nextLine()
		w.Cancel("first")
		tk.Loop().CallLater(time.Second, func() { w.Cancel("second") })
		if err := Sleep(tk, 1500*time.Millisecond); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		w.Cancel("third")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	ti := byName(snap)["worker"]
	if len(ti.CancelRequests) != 2 {
		t.Fatalf("cancel requests %+v, want 2", ti.CancelRequests)
	}
	first, second := ti.CancelRequests[0], ti.CancelRequests[1]
	if !strings.HasPrefix(first.By, "task 'main' (0x") || first.Msg != "first" || first.At != time.Second {
		t.Errorf("first request %+v", first)
	}
	if first.Frame == nil || first.Frame.File != thisFile || first.Frame.Line != line {
		t.Errorf("first request's frame %v, want %s:%d", first.Frame, thisFile, line)
	}
	if second.By != "callback" || second.Msg != "second" || second.At != 2*time.Second {
		t.Errorf("second request %+v", second)
	}
	if second.Frame == nil || !strings.HasPrefix(shortFunc(second.Frame.Function), "asyncio.TestCancelRequests_Recorded") {
		t.Errorf("second request's frame %v, want the test's callback", second.Frame)
	}
}

// The loop keeps its last cancelLogSize requests, whoever they were for.
func TestCancelRequests_Bounded(t *testing.T) {
	var snap *LoopSnapshot
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "worker", func(tk *T) error { return Sleep(tk, time.Hour) })
		for i := range cancelLogSize + 3 {
			w.Cancel(fmt.Sprint(i))
		}
		snap = Snapshot(tk, SnapshotOptions{})
		return nil
	})
	ti := byName(snap)["worker"]
	if ti.Cancelling != cancelLogSize+3 || len(ti.CancelRequests) != cancelLogSize || ti.CancelRequests[0].Msg != "3" {
		t.Errorf("cancelling %d, %d records from %q", ti.Cancelling, len(ti.CancelRequests), ti.CancelRequests[0].Msg)
	}
}

// Recording a cancel request allocates nothing once the loop's log exists.
func TestCancelRequests_NoAllocations(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	tk := startTask(l, "w", func(tk *T) error { return Sleep(tk, time.Hour) })
	runOne(t, l) // parked on its sleep
	tk.Cancel()
	if n := testing.AllocsPerRun(100, func() { tk.t.noteCancelRequest("x") }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

// swallowReports runs main in debug mode and returns the swallowed-
// cancellation reports.
func swallowReports(t *testing.T, main func(tk *T) error) []*SwallowedCancelError {
	t.Helper()
	l := NewLoop(WithVirtualTime(), WithDebug())
	defer mustClose(t, l)
	var got []*SwallowedCancelError
	l.SetExceptionHandler(func(_ *Loop, c ExceptionContext) {
		var e *SwallowedCancelError
		if errors.As(c.Err, &e) {
			got = append(got, e)
		}
	})
	if err := l.RunUntilComplete(startTask(l, "main", main)); err != nil && !IsCancelled(err) {
		t.Fatal(err)
	}
	return got
}

// Debug mode reports a task that ignores a CancelledError and awaits again
// at the same await, with both locations.
func TestSwallowedCancel_SameAwaitAgain(t *testing.T) {
	var line int
	got := swallowReports(t, func(tk *T) error {
		w := startTask(tk, "stubborn", func(tk *T) error {
			for i := 0; i < 2; i++ {
				line = nextLine()
				_ = Sleep(tk, time.Second) //asynciovet:ignore droppedcancel the swallowed cancellation is what the test reports
			}
			return nil
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		w.Cancel()
		return tk.Await(w)
	})
	if len(got) != 1 {
		t.Fatalf("%d reports, want 1: %v", len(got), got)
	}
	e := got[0]
	if e.Task != "stubborn" || e.Then != "awaited again at the same place" ||
		e.DeliveredAt.Line != line || e.ThenAt.Line != line || e.DeliveredAt.File != thisFile {
		t.Errorf("report %+v, want both locations at line %d", e, line)
	}
	if !strings.Contains(e.Error(), fmt.Sprintf("diag_snapshot_test.go:%d", line)) {
		t.Errorf("message %q does not name the line", e.Error())
	}
}

// Debug mode reports a task that ends normally after a CancelledError it
// did not withdraw; Uncancel, returning the error, and cleanup awaits
// before returning it are not reported.
func TestSwallowedCancel_FinishAndLegitimateCases(t *testing.T) {
	cases := []struct {
		name string
		body func(tk *T) error
		want string // "" for no report
	}{
		{"finishes normally", func(tk *T) error {
			//asynciovet:ignore droppedcancel the swallowed cancellation is what debug mode must report
			_ = Sleep(tk, time.Hour)
			return nil
		}, "finished with a nil error"},
		{"fails with another error", func(tk *T) error {
			//asynciovet:ignore droppedcancel the swallowed cancellation is what debug mode must report
			_ = Sleep(tk, time.Hour)
			return errBoom
		}, ""},
		{"uncancels", func(tk *T) error {
			if err := Sleep(tk, time.Hour); err != nil {
				tk.Uncancel()
			}
			return Sleep(tk, time.Second)
		}, ""},
		{"returns it after cleanup awaits", func(tk *T) error {
			err := Sleep(tk, time.Hour)
			//asynciovet:ignore droppedcancel a cleanup await before returning the cancellation, which debug mode must accept
			_ = Sleep(tk, time.Second) // cleanup
			//asynciovet:ignore droppedcancel a cleanup await before returning the cancellation, which debug mode must accept
			_ = Sleep(tk, time.Second)
			return err
		}, ""},
		{"wraps it", func(tk *T) error {
			return fmt.Errorf("work: %w", Sleep(tk, time.Hour))
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := swallowReports(t, func(tk *T) error {
				w := startTask(tk, "w", c.body)
				if err := Sleep(tk, 0); err != nil {
					return err
				}
				w.Cancel()
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				_ = tk.Await(w)
				return nil
			})
			var then []string
			for _, e := range got {
				then = append(then, e.Then)
			}
			var want []string
			if c.want != "" {
				want = []string{c.want}
			}
			if d := cmp.Diff(want, then); d != "" {
				t.Errorf("reports (-want +got):\n%s", d)
			}
		})
	}
}

// A TaskGroup cancels its parent when a child fails and withdraws that
// cancellation on exit: the body's await returned a CancelledError and the
// group's exit awaited again, but nothing was swallowed.
func TestSwallowedCancel_TaskGroupAbortIsNotReported(t *testing.T) {
	got := swallowReports(t, func(tk *T) error {
		err := TaskGroup(tk, func(g *Group) error {
			_, _ = Spawn(g, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) })
			_, _ = Spawn(g, func(tk *T) (int, error) { return 0, errBoom })
			return Sleep(tk, time.Hour)
		})
		if !errors.Is(err, errBoom) {
			return fmt.Errorf("TaskGroup: %v", err)
		}
		return Sleep(tk, time.Second)
	})
	if len(got) != 0 {
		t.Errorf("reports %v, want none", got)
	}
}

// ErrDeadlock comes with a dump of what every task waits on, and
// errors.Is still matches.
func TestDeadlockError_CarriesDump(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	var a, b *Task[struct{}]
	a = startTask(l, "a", func(tk *T) error { return Sleep(tk, 0) })
	main := startTask(l, "main", func(tk *T) error {
		lk := NewLock()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = lk.Acquire(tk)
		b = startTask(tk, "b", func(tk *T) error { return lk.Acquire(tk) })
		return tk.Await(b)
	})
	_ = a
	err := l.RunUntilComplete(main)
	var de *DeadlockError
	if !errors.Is(err, ErrDeadlock) || !errors.As(err, &de) {
		t.Fatalf("err %v, want a *DeadlockError matching ErrDeadlock", err)
	}
	want := "asyncio: deadlock: the loop would block forever; the tasks and what they wait on:\n" +
		"└── (T) main [waiting 0s on task 'b']\n" +
		"    └── (T) b [waiting 0s on Lock.Acquire]\n" +
		"note: 2 tasks started before stacks were recorded (WithTaskStacks or debug mode): no stack, no creator"
	if err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
}

// The dump is safe while tasks come and go: goroutines hammer
// SnapshotThreadsafe while the loop creates and finishes tasks (run with
// -race). Each snapshot must be consistent: every awaited-by edge names a
// task that is in the snapshot or was omitted.
func TestSnapshotThreadsafe_HammerWhileTasksComeAndGo(t *testing.T) {
	l := NewLoop(WithTaskStacks())
	var stop atomic.Bool
	done := make(chan error, 1)
	main := startTask(l, "main", func(tk *T) error {
		n := 0
		for !stop.Load() {
			for range 5 {
				startTask(tk, fmt.Sprint("t", n), func(tk *T) error { return Sleep(tk, 0) })
				n++
			}
			if err := Sleep(tk, 0); err != nil {
				return err
			}
		}
		return nil
	})
	go func() { done <- l.RunUntilComplete(main) }()
	var wg sync.WaitGroup
	var taken atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				s := l.SnapshotThreadsafe(time.Minute, SnapshotOptions{})
				if s.Blocked || s.Closed {
					t.Errorf("snapshot blocked=%v closed=%v", s.Blocked, s.Closed)
					return
				}
				ids := map[string]bool{}
				for _, ti := range s.Tasks {
					ids[ti.ID] = true
				}
				for _, ti := range s.Tasks {
					for _, a := range ti.AwaitedBy {
						if !ids[a.ID] && s.Omitted == 0 {
							t.Errorf("edge to a task not in the snapshot: %+v", a)
						}
					}
				}
				var b strings.Builder
				_ = s.WriteTree(&b)
				_ = s.WritePS(&b)
				taken.Add(1)
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	if taken.Load() != 200 {
		t.Errorf("%d snapshots, want 200", taken.Load())
	}
}

// A loop that is not running does not answer: the snapshot says it is
// blocked, whatever the timeout.
func TestSnapshotThreadsafe_NotRunningIsBlocked(t *testing.T) {
	l := NewTestLoop()
	s := l.SnapshotThreadsafe(time.Millisecond, SnapshotOptions{})
	if !s.Blocked || len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "blocked") {
		t.Errorf("snapshot %+v, want Blocked with a note", s)
	}
	var b strings.Builder
	_ = s.WriteTree(&b)
	if !strings.HasPrefix(b.String(), "(loop blocked: no snapshot)\n") {
		t.Errorf("tree %q", b.String())
	}
	mustClose(t, l)
}

// WriteDump writes the tree and the table from any goroutine.
func TestWriteDump(t *testing.T) {
	l := NewLoop()
	release := NewFuture[struct{}](l)
	main := startTask(l, "main", func(tk *T) error { _, err := release.Await(tk); return err })
	go func() {
		var b strings.Builder
		err := l.WriteDump(&b, time.Minute)
		_, _ = l.CallSoonThreadsafe(func() {
			if err != nil || !strings.Contains(b.String(), "└── (T) main [waiting") || !strings.Contains(b.String(), "task name") {
				release.SetException(fmt.Errorf("dump %q, %v", b.String(), err))
				return
			}
			release.SetResult(struct{}{})
		})
	}()
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

// Snapshots of many tasks are bounded: 1000 described, the rest counted
// (BenchmarkSnapshot100k measures 100,000 tasks; the race detector allows
// 8128 goroutines, so the test uses 5000).
func TestSnapshot_ManyTasksBounded(t *testing.T) {
	const n = 5000
	var snap *LoopSnapshot
	var out strings.Builder
	runVirtual(t, func(tk *T) error {
		stop := NewFuture[struct{}](tk)
		for range n {
			startTask(tk, "w", func(tk *T) error { _, err := stop.Await(tk); return err })
		}
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		snap = Snapshot(tk, SnapshotOptions{})
		_ = snap.WriteTree(&out)
		_ = snap.WritePS(&out)
		stop.SetResult(struct{}{})
		return nil
	})
	if len(snap.Tasks) != DefaultSnapshotTasks || snap.Omitted != n+1-DefaultSnapshotTasks || snap.Summary["waiting: future"] != n {
		t.Errorf("%d tasks, %d omitted, summary %v", len(snap.Tasks), snap.Omitted, snap.Summary)
	}
	if lines := strings.Count(out.String(), "\n"); lines > 2*DefaultSnapshotTasks+10 {
		t.Errorf("%d lines of output, want at most %d", lines, 2*DefaultSnapshotTasks+10)
	}
}
