package asyncio

import (
	"testing"
	"time"
)

// SHIELD-1: a done awaitable is returned itself.
func TestSHIELD1_DoneReturnsInner(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	f := NewFuture[int](l)
	f.SetResult(1)
	if got := Shield[int](f); got != AwaitableOf[int](f) {
		t.Fatalf("Shield(done) = %v, want the same future", got)
	}
	p := NewFuture[int](l)
	if got := Shield[int](p); got == AwaitableOf[int](p) {
		t.Fatal("Shield(pending) returned the inner future")
	}
}

// SHIELD-2: the inner outcome is copied; inner cancelled -> outer cancelled.
func TestSHIELD2_CopiesOutcome(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		ok := CreateTask(tk, sleeper(r, "ok", time.Second, 3))
		v, err := Shield[int](ok).Await(tk)
		r.log("ok: %v %v", v, err)

		bad := CreateTask(tk, failer(r, "bad", time.Second, errBoom))
		_, err = Shield[int](bad).Await(tk)
		r.log("bad: %v", err)

		victim := CreateTask(tk, sleeper(r, "victim", time.Hour, 0))
		outer := Shield[int](victim)
		tk.Loop().CallLater(time.Second, func() { victim.Cancel("x") })
		_, err = outer.Await(tk)
		r.log("victim: %v outer cancelled=%v", err, outer.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s ok start", "1s ok done", "1s ok: 3 <nil>",
		"1s bad start", "2s bad fails", "2s bad: boom",
		"2s victim start", "3s victim: asyncio: cancelled: x", "3s victim: asyncio: cancelled outer cancelled=true",
	}, r)
}

// SHIELD-3: cancelling the outer (directly or through the awaiting task)
// leaves the inner running.
func TestSHIELD3_OuterCancelLeavesInner(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := CreateTask(tk, sleeper(r, "inner", 2*time.Second, 7))
		outer := Shield[int](inner)
		r.log("outer.Cancel=%v", outer.Cancel())
		w := CreateTask(tk, func(wt *T) (int, error) {
			v, err := Shield[int](inner).Await(wt)
			r.log("w: %v %v", v, err)
			return v, err
		})
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, time.Second)
		w.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		w.Await(tk)
		v, err := inner.Await(tk)
		r.log("inner: %v %v cancelled=%v", v, err, inner.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s outer.Cancel=true",
		"0s inner start",
		"1s w: 0 asyncio: cancelled",
		"2s inner done",
		"2s inner: 7 <nil> cancelled=false",
	}, r)
}

// SHIELD-4 (3.13): when the outer finishes first the copying callback is
// removed from the inner; if the inner had already finished, its error is
// marked retrieved.
func TestSHIELD4_OuterFirstDropsCallback(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	inner := NewFuture[int](l)
	outer := Shield[int](inner)
	if n := len(inner.core().registered()); n != 1 {
		t.Fatalf("inner callbacks before = %d", n)
	}
	outer.Cancel()
	l.CallSoon(l.Stop)
	l.RunForever()
	if n := len(inner.core().registered()); n != 0 {
		t.Errorf("inner callbacks after outer cancelled = %d, want 0", n)
	}

	inner2 := NewFuture[int](l)
	outer2 := Shield[int](inner2)
	inner2.SetException(errBoom)
	outer2.Cancel() // same iteration: the copying callback is already queued
	if inner2.core().unretrievedRec() == nil {
		t.Fatal("precondition: inner2's error is unretrieved")
	}
	l.CallSoon(l.Stop)
	l.RunForever()
	if inner2.core().unretrievedRec() != nil {
		t.Error("inner2's error not marked retrieved")
	}
}
