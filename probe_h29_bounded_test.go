package asyncio

// Hostile probe h29 of BoundedTaskGroup: a queued child whose
// cancellation was withdrawn (Uncancel) before its first step waits for a
// slot again, behind the children queued meanwhile; granted one and
// cancelled before it resumed, it does not run and its slot is free again.

import (
	"testing"
)

func TestH29_BoundedChildGrantedThenCancelledPassesItsSlot(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		var log []string
		err := BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			release := NewFuture[struct{}](tk)
			a, _ := SpawnBoundedErr(g, func(x *T) error {
				_, err := release.Await(x)
				return err
			})
			b, _ := SpawnBoundedErr(g, func(x *T) error {
				log = append(log, "b ran")
				return nil
			})
			c, _ := SpawnBoundedErr(g, func(x *T) error {
				log = append(log, "c ran")
				return nil
			})
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			_ = Sleep(tk, 0) // a runs; b and c are queued
			b.Cancel()
			b.Uncancel() // b's first step runs: it queues again, behind c
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			_ = Sleep(tk, 0)
			release.SetResult(struct{}{})
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			_ = Sleep(tk, 0) // a ends: its slot goes to c, then to b
			awaitAll(tk, a)
			for !b.Done() && g.Queued() > 0 {
				//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
				_ = Sleep(tk, 0)
			}
			if b.Done() || g.busy != 1 || g.running != 0 {
				t.Fatalf("b not granted a slot and waiting to resume (done %v, busy %d, running %d): the probe missed its window", b.Done(), g.busy, g.running)
			}
			b.Cancel() // granted, not resumed yet
			awaitAll(tk, b, c)
			if g.Free() != 1 || g.Queued() != 0 {
				t.Errorf("after every child: %d free, %d queued; want 1, 0", g.Free(), g.Queued())
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(log) != 1 || log[0] != "c ran" {
			t.Errorf("ran: %v; want only c (b was granted its slot after c, and cancelled before it resumed)", log)
		}
		return nil
	})
}
