package asyncio

// Seeing a group, probed by a hostile run (2026-12-05): what a group's
// snapshot says of a loop that is blocked or closed, and where each task
// and each cross-loop call shows.

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A blocked or a closed loop's part of a group snapshot has no tasks in
// it: the renderings must say which ("a clear marker per loop"), not
// "0 tasks" and an empty table, which read as an idle loop.
func TestGroupDiagEdge_BlockedAndClosedLoopsMarked(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	// Not running: no loop can answer, whatever the timeout.
	s := g.SnapshotThreadsafe(time.Millisecond, SnapshotOptions{})
	var ps, tree strings.Builder
	if err := s.WritePS(&ps); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTree(&tree); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		head := "== loop " + string(rune('0'+i)) + " (loop " + string(rune('0'+i)) + "): blocked, no snapshot ==\n(loop blocked: no snapshot)\n"
		if !strings.Contains(ps.String(), head) {
			t.Errorf("WritePS of blocked loop %d lacks %q:\n%s", i, head, ps.String())
		}
		if !strings.Contains(tree.String(), head) {
			t.Errorf("WriteTree of blocked loop %d lacks %q:\n%s", i, head, tree.String())
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	s = g.SnapshotThreadsafe(time.Hour, SnapshotOptions{})
	ps.Reset()
	if err := s.WritePS(&ps); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ps.String(), "tasks ==") || strings.Count(ps.String(), "): closed ==\n(loop closed: no tasks)\n") != 2 {
		t.Errorf("WritePS of a closed group:\n%s", ps.String())
	}
	// A loop's own table says so too, as its tree does.
	var one strings.Builder
	if err := s.Loops[0].WritePS(&one); err != nil || !strings.HasPrefix(one.String(), "(loop closed: no tasks)\ntid ") {
		t.Errorf("LoopSnapshot.WritePS of a closed loop: %v\n%s", err, one.String())
	}
}

// A group with a task waiting on every loop, one loop blocked meanwhile:
// each task is listed under its own loop's header, a task awaiting a
// cross-loop call names the remote task and its loop, and the blocked
// loop alone is marked.
func TestGroupDiagEdge_TasksOnEveryLoopOneBlocked(t *testing.T) {
	g := NewLoopGroup(WithLoops(3))
	defer g.Close()
	quietGroup(g)
	release := make(chan struct{})
	parked := make(chan struct{}, 3)
	blocked := make(chan struct{})
	out := make(chan *GroupSnapshot, 1)
	runOut := make(chan error, 1)
	go func() {
		_, err := RunEach(g, func(tk *T, i int) (int, error) {
			stop := NewFuture[int](tk)
			//asynciovet:ignore unawaitedtask the worker waits on purpose, for the snapshot; the main cancels it
			w := CreateTask(tk, func(ct *T) (int, error) {
				if i == 0 { // awaits a task on loop 1
					return CallOn(ct, g.Loop(1), func(rt *T) (int, error) {
						//asynciovet:ignore blockingcall buffered with room for every loop
						parked <- struct{}{}
						return stop2(rt)
					})
				}
				return stop.Await(ct)
			}, WithName("worker-"+string(rune('0'+i))))
			if i == 1 {
				if err := Sleep(tk, 0); err != nil {
					return 0, err
				}
				//asynciovet:ignore blockingcall buffered with room for every loop
				parked <- struct{}{}
				if _, err := Go(tk, func(context.Context) (int, error) { <-release; return 0, nil }); err != nil {
					return 0, err
				}
			}
			if i == 2 {
				if err := Sleep(tk, 0); err != nil {
					return 0, err
				}
				//asynciovet:ignore blockingcall buffered with room for every loop
				parked <- struct{}{}
				close(blocked)
				//asynciovet:ignore blockingcall holds loop 2 on purpose, for the snapshot to find it blocked
				<-release
			}
			if i == 0 {
				s, err := Go(tk, func(context.Context) (*GroupSnapshot, error) {
					for range 3 {
						<-parked
					}
					<-blocked
					return g.SnapshotThreadsafe(2*time.Second, SnapshotOptions{}), nil
				})
				if err != nil {
					return 0, err
				}
				//asynciovet:ignore blockingcall buffered: the send never blocks
				out <- s
				close(release)
			}
			w.Cancel()
			if _, err := w.Await(tk); !IsCancelled(err) {
				return 0, err
			}
			return 0, nil
		})
		runOut <- err
	}()
	s, ok := waitOrHang(t, out, "the snapshot")
	if !ok {
		return
	}
	if _, ok := waitOrHang(t, runOut, "RunEach returning"); !ok {
		return
	}
	var ps strings.Builder
	if err := s.WritePS(&ps); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(ps.String(), "\n== loop ")
	if len(parts) != 3 {
		t.Fatalf("%d parts:\n%s", len(parts), ps.String())
	}
	for i, p := range parts[:2] {
		if s.Loops[i].Blocked {
			t.Skipf("loop %d did not answer within 2s (a loaded machine?)", i)
		}
		if !strings.Contains(p, "worker-"+string(rune('0'+i))) || strings.Contains(p, "blocked") {
			t.Errorf("part %d:\n%s", i, p)
		}
	}
	if !strings.Contains(parts[0], "cross-loop call: task '") || !strings.Contains(parts[0], "' on loop 1") {
		t.Errorf("worker-0 does not name the remote task on loop 1:\n%s", parts[0])
	}
	if !strings.HasPrefix(parts[2], "2 (loop 2): blocked, no snapshot ==\n(loop blocked: no snapshot)\n") || strings.Contains(parts[2], "worker-2") {
		t.Errorf("blocked loop 2:\n%s", parts[2])
	}
	if st := s.Stats(); st[2] != (LoopStats{}) || st[0].Tasks < 2 {
		t.Errorf("Stats: %+v", st)
	}
}

// stop2 waits on a future nobody completes (until cancelled).
func stop2(t *T) (int, error) { return NewFuture[int](t).Await(t) }
