package asyncio

// Seeing a group (issue 18 item 4): a snapshot of every loop of a
// LoopGroup, over the existing per-loop snapshot (introspect.go), each
// loop's part taken on that loop.

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// GroupSnapshot is a snapshot of every loop of a LoopGroup. Each loop's
// part is consistent in itself, taken on that loop; the parts are taken
// in parallel, not at one instant across loops.
type GroupSnapshot struct {
	Loops []GroupLoopSnapshot `json:"loops"`
}

// GroupLoopSnapshot is one loop's part of a GroupSnapshot: every task in
// it is on the loop with this Index. SnapshotThreadsafe always fills
// LoopSnapshot in; in a GroupSnapshot made otherwise it may be nil, which
// WritePS, WriteTree and Stats take as a loop without a snapshot.
type GroupLoopSnapshot struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	*LoopSnapshot
}

// SnapshotThreadsafe takes a snapshot of every loop of g, from any
// goroutine, each as Loop.SnapshotThreadsafe takes it (a loop that does
// not answer within timeout is marked Blocked). A timeout <= 0 panics with
// a *ValueError.
func (g *LoopGroup) SnapshotThreadsafe(timeout time.Duration, opts SnapshotOptions) *GroupSnapshot {
	if timeout <= 0 {
		panic(&ValueError{Msg: fmt.Sprintf("LoopGroup.SnapshotThreadsafe: timeout %v, want > 0", timeout)})
	}
	s := &GroupSnapshot{Loops: make([]GroupLoopSnapshot, len(g.loops))}
	var wg sync.WaitGroup
	for i, l := range g.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Loops[i] = GroupLoopSnapshot{Index: i, Name: l.Name(), LoopSnapshot: l.SnapshotThreadsafe(timeout, opts)}
		}()
	}
	wg.Wait()
	return s
}

// WritePS writes each loop's task table (LoopSnapshot.WritePS) under a
// header naming the loop and giving its number of tasks, or saying that
// it was blocked, busy or closed. A loop whose LoopSnapshot is nil gets
// its header, saying "no snapshot", and nothing under it.
func (s *GroupSnapshot) WritePS(w io.Writer) error {
	return s.each(w, (*LoopSnapshot).WritePS)
}

// WriteTree writes each loop's task tree (LoopSnapshot.WriteTree) under a
// header naming the loop and giving its number of tasks, or saying that
// it was blocked, busy or closed (or, for a nil LoopSnapshot, that there
// is no snapshot, as WritePS does).
func (s *GroupSnapshot) WriteTree(w io.Writer) error {
	return s.each(w, (*LoopSnapshot).WriteTree)
}

func (s *GroupSnapshot) each(w io.Writer, write func(*LoopSnapshot, io.Writer) error) error {
	for k, ls := range s.Loops {
		sep := "\n"
		if k == 0 {
			sep = ""
		}
		if ls.LoopSnapshot == nil { // a GroupSnapshot not made by SnapshotThreadsafe
			if _, err := fmt.Fprintf(w, "%s== loop %d (%s): no snapshot ==\n", sep, ls.Index, ls.Name); err != nil {
				return err
			}
			continue
		}
		// A blocked or closed loop's part has no tasks in it: the header
		// says which, not "0 tasks".
		state := fmt.Sprintf("%d tasks", len(ls.Tasks)+ls.Omitted)
		switch {
		case ls.Busy:
			state = "busy, no snapshot"
		case ls.Blocked:
			state = "blocked, no snapshot"
		case ls.Closed:
			state = "closed"
		}
		if _, err := fmt.Fprintf(w, "%s== loop %d (%s): %s ==\n", sep, ls.Index, ls.Name, state); err != nil {
			return err
		}
		if err := write(ls.LoopSnapshot, w); err != nil {
			return err
		}
	}
	return nil
}

// Stats returns each loop's counters, by loop index (read on each loop,
// as the snapshot is). A Blocked or Closed loop's part holds none: its
// entry is zero (Loops[i] says which), as is a nil LoopSnapshot's.
func (s *GroupSnapshot) Stats() []LoopStats {
	out := make([]LoopStats, len(s.Loops))
	for i, ls := range s.Loops {
		if ls.LoopSnapshot != nil {
			out[i] = ls.LoopSnapshot.Stats
		}
	}
	return out
}
