package asyncio

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// ---------------------------------------------------------------- SHIELD

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
	r, err := runMain(t, func(tk *T, r *recorder) error {
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
	checkLog(t, r, []string{
		"0s ok start", "1s ok done", "1s ok: 3 <nil>",
		"1s bad start", "2s bad fails", "2s bad: boom",
		"2s victim start", "3s victim: asyncio: cancelled: x", "3s victim: asyncio: cancelled outer cancelled=true",
	})
}

// SHIELD-3: cancelling the outer (directly or through the awaiting task)
// leaves the inner running.
func TestSHIELD3_OuterCancelLeavesInner(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		inner := CreateTask(tk, sleeper(r, "inner", 2*time.Second, 7))
		outer := Shield[int](inner)
		r.log("outer.Cancel=%v", outer.Cancel())
		w := CreateTask(tk, func(wt *T) (int, error) {
			v, err := Shield[int](inner).Await(wt)
			r.log("w: %v %v", v, err)
			return v, err
		})
		Sleep(tk, time.Second)
		w.Cancel()
		w.Await(tk)
		v, err := inner.Await(tk)
		r.log("inner: %v %v cancelled=%v", v, err, inner.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s outer.Cancel=true",
		"0s inner start",
		"1s w: 0 asyncio: cancelled",
		"2s inner done",
		"2s inner: 7 <nil> cancelled=false",
	})
}

// SHIELD-4 (3.13): when the outer finishes first the copying callback is
// removed from the inner; if the inner had already finished, its error is
// marked retrieved.
func TestSHIELD4_OuterFirstDropsCallback(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	inner := NewFuture[int](l)
	outer := Shield[int](inner)
	if n := len(inner.core().callbacks); n != 1 {
		t.Fatalf("inner callbacks before = %d", n)
	}
	outer.Cancel()
	l.CallSoon(l.Stop)
	l.RunForever()
	if n := len(inner.core().callbacks); n != 0 {
		t.Errorf("inner callbacks after outer cancelled = %d, want 0", n)
	}

	inner2 := NewFuture[int](l)
	outer2 := Shield[int](inner2)
	inner2.SetException(errBoom)
	outer2.Cancel() // same iteration: the copying callback is already queued
	if inner2.core().unretrieved == nil {
		t.Fatal("precondition: inner2's error is unretrieved")
	}
	l.CallSoon(l.Stop)
	l.RunForever()
	if inner2.core().unretrieved != nil {
		t.Error("inner2's error not marked retrieved")
	}
}

// ---------------------------------------------------------------- GATHER

// GATHER-1: results in argument order; duplicates share one child.
func TestGATHER1_PositionalAndDuplicates(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		a := CreateTask(tk, sleeper(r, "a", 2*time.Second, 1))
		b := CreateTask(tk, sleeper(r, "b", time.Second, 2))
		dup := CreateTask(tk, sleeper(r, "dup", 3*time.Second, 3))
		v, err := Gather[int](tk, a, dup, b, dup, dup).Await(tk)
		r.log("%v %v", v, err)
		vs, err := GatherFuncs(tk,
			func(*T) (string, error) { return "x", nil },
			func(*T) (string, error) { return "y", nil }).Await(tk)
		r.log("%q %v", vs, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start", "0s b start", "0s dup start",
		"1s b done", "2s a done", "3s dup done",
		"3s [1 3 2 3 3] <nil>",
		`3s ["x" "y"] <nil>`,
	})
}

// GATHER-2: no awaitables -> done with an empty result; mixed loops panic.
func TestGATHER2_EmptyAndMixedLoops(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	g := Gather[int](l)
	v, err := g.Result()
	if !g.Done() || err != nil || v == nil || len(v) != 0 {
		t.Fatalf("empty gather: done=%v %v %v", g.Done(), v, err)
	}
	l2 := NewTestLoop()
	defer l2.Close()
	defer func() {
		if !errors.Is(recover().(error), ErrValue) {
			t.Error("want a *ValueError panic")
		}
	}()
	Gather[int](l, NewFuture[int](l), NewFuture[int](l2))
}

// GATHER-3: the first failure fails the gather at once; the others keep
// running; a cancelled child is an *error* of the gather.
func TestGATHER3_FirstErrorAndCancelledChild(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		slow := CreateTask(tk, sleeper(r, "slow", 3*time.Second, 1))
		bad := CreateTask(tk, failer(r, "bad", time.Second, errBoom))
		bad2 := CreateTask(tk, failer(r, "bad2", 2*time.Second, errKey))
		_, err := Gather[int](tk, slow, bad, bad2).Await(tk)
		r.log("gather: %v", err)
		Sleep(tk, 5*time.Second)
		r.log("slow cancelled=%v bad2 unretrieved=%v", slow.Cancelled(), bad2.core().unretrieved != nil)

		f := NewFuture[int](tk)
		other := NewFuture[int](tk)
		g := Gather[int](tk, f, other)
		f.Cancel("child")
		_, err = g.Await(tk)
		var ce *CancelledError
		r.log("gather: %v msg=%q cancelled=%v other cancelled=%v", err, func() string { errors.As(err, &ce); return ce.Msg }(), g.Cancelled(), other.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s slow start", "0s bad start", "0s bad2 start",
		"1s bad fails",
		"1s gather: boom",
		"2s bad2 fails",
		"3s slow done",
		"6s slow cancelled=false bad2 unretrieved=false",
		`6s gather: asyncio: cancelled: child msg="child" cancelled=false other cancelled=false`,
	})
}

// GATHER-4: return_exceptions: errors in place; a cancelled future keeps
// its message, a cancelled task gives CancelledError("").
func TestGATHER4_Outcomes(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		ok := CreateTask(tk, sleeper(r, "ok", 2*time.Second, 1))
		bad := CreateTask(tk, failer(r, "bad", time.Second, errBoom))
		task := CreateTask(tk, sleeper(r, "task", time.Hour, 0))
		fut := NewFuture[int](tk)
		tk.Loop().CallLater(time.Second, func() { task.Cancel("tmsg"); fut.Cancel("fmsg") })
		out, err := GatherOutcomes[int](tk, ok, bad, task, fut).Await(tk)
		r.log("err=%v", err)
		for i, o := range out {
			var ce *CancelledError
			if errors.As(o.Err, &ce) {
				r.log("%d: CE(%q)", i, ce.Msg)
			} else {
				r.log("%d: %v %v", i, o.Value, o.Err)
			}
		}
		mixed, err := GatherAny(tk, ok, Shield[int](ok), fut2(tk, "s")).Await(tk)
		r.log("any: %v %v", mixed, err)
		mo, err := GatherAnyOutcomes(tk, bad, ok).Await(tk)
		r.log("any outcomes: %v %v", mo, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s ok start", "0s bad start", "0s task start",
		"1s task: asyncio: cancelled: tmsg", // the CallLater timer was armed first
		"1s bad fails",
		"2s ok done",
		"2s err=<nil>",
		"2s 0: 1 <nil>",
		"2s 1: 0 boom",
		`2s 2: CE("")`,
		`2s 3: CE("fmsg")`,
		"2s any: [1 1 s] <nil>",
		"2s any outcomes: [{<nil> boom} {1 <nil>}] <nil>",
	})
}

func fut2(l LoopOwner, v string) *Future[string] {
	f := NewFuture[string](l)
	f.SetResult(v)
	return f
}

// GATHER-5: outer.Cancel cancels the children; the gather then fails with
// a CancelledError (also with return_exceptions) but is not Cancelled().
func TestGATHER5_OuterCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		for _, outcomes := range []bool{false, true} {
			a := CreateTask(tk, sleeper(r, "a", time.Hour, 0))
			b := CreateTask(tk, func(ctk *T) (int, error) {
				err := Sleep(ctk, time.Hour)
				Sleep(ctk, time.Second) // slow to finish
				return 0, err
			})
			var g interface {
				Awaitable
			}
			if outcomes {
				g = GatherOutcomes[int](tk, a, b)
			} else {
				g = Gather[int](tk, a, b)
			}
			Sleep(tk, 0)
			r.log("cancel=%v", g.Cancel("gc"))
			err := tk.Await(g)
			r.log("outcomes=%v: %v cancelled=%v cancel again=%v", outcomes, err, g.Cancelled(), g.Cancel())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start",
		"0s cancel=true",
		"0s a: asyncio: cancelled: gc",
		// Without return_exceptions the first cancelled child fails the
		// gather at once (GATHER-3); with it, the gather waits for b.
		"0s outcomes=false: asyncio: cancelled: gc cancelled=false cancel again=false",
		"0s a start",
		"0s cancel=true",
		"0s a: asyncio: cancelled: gc",
		"1s outcomes=true: asyncio: cancelled: gc cancelled=false cancel again=false",
	})
}

// GATHER-6: cancelling the task awaiting a gather cancels every child.
func TestGATHER6_CancelAwaitingTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		a := CreateTask(tk, sleeper(r, "a", time.Hour, 0))
		b := CreateTask(tk, sleeper(r, "b", time.Hour, 0))
		w := CreateTask(tk, func(wt *T) (int, error) {
			_, err := Gather[int](wt, a, b).Await(wt)
			return 0, err
		})
		Sleep(tk, time.Second)
		w.Cancel("stop")
		_, err := w.Await(tk)
		r.log("w: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start", "0s b start",
		"1s a: asyncio: cancelled: stop",
		"1s b: asyncio: cancelled: stop",
		"1s w: asyncio: cancelled: stop",
	})
}

// GATHER-7 (3.12): a gather of done children is done on return.
func TestGATHER7_DoneChildrenSynchronous(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	a, b := NewFuture[int](l), NewFuture[int](l)
	a.SetResult(1)
	b.SetResult(2)
	g := Gather[int](l, a, b, a)
	v, err := g.Result()
	if !g.Done() || err != nil || fmt.Sprint(v) != "[1 2 1]" {
		t.Fatalf("done=%v %v %v", g.Done(), v, err)
	}
	c := NewFuture[int](l)
	c.SetException(errBoom)
	g2 := Gather[int](l, a, c)
	if !g2.Done() || g2.Err() != errBoom {
		t.Fatalf("failed child: done=%v %v", g2.Done(), g2.Err())
	}
}

// ---------------------------------------------------------------- WAIT

func names(aws []Awaitable, byAw map[Awaitable]string) []string {
	out := []string{}
	for _, a := range aws {
		out = append(out, byAw[a])
	}
	return out
}

// WAIT-1: argument errors.
func TestWAIT1_ArgumentErrors(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		_, _, err := Wait(tk, nil, Never, AllCompleted)
		var ve *ValueError
		errors.As(err, &ve)
		r.log("%q is=%v", ve.Msg, errors.Is(err, ErrValue))
		_, _, err = Wait(tk, []Awaitable{NewFuture[int](tk)}, Never, ReturnWhen(7))
		errors.As(err, &ve)
		r.log("%q", ve.Msg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		`0s "Set of Tasks/Futures is empty." is=true`,
		`0s "Invalid return_when value: ReturnWhen(7)"`,
	})
}

// WAIT-2, WAIT-3: de-duplication and the three return conditions.
func TestWAIT3_ReturnWhen(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		for _, when := range []ReturnWhen{FirstCompleted, FirstException, AllCompleted} {
			c := CreateTask(tk, sleeper(r, "c", time.Second, 0))
			x := CreateTask(tk, func(ctk *T) (int, error) { return 0, Sleep(ctk, time.Hour) })
			tk.Loop().CallLater(2*time.Second, func() { x.Cancel() }) // a cancellation is no exception
			f := CreateTask(tk, failer(r, "f", 3*time.Second, errBoom))
			s := CreateTask(tk, sleeper(r, "s", 4*time.Second, 0))
			byAw := map[Awaitable]string{c: "c", x: "x", f: "f", s: "s"}
			done, pending, err := Wait(tk, []Awaitable{s, c, x, c, f}, Never, when)
			r.log("%v: done=%v pending=%v err=%v", when, names(done, byAw), names(pending, byAw), err)
			Wait(tk, pending, Never, AllCompleted)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s c start", "0s f start", "0s s start",
		"1s c done",
		"1s FIRST_COMPLETED: done=[c] pending=[s x f] err=<nil>",
		"3s f fails",
		"4s s done",
		"4s c start", "4s f start", "4s s start",
		"5s c done",
		"7s f fails",
		"7s FIRST_EXCEPTION: done=[c x f] pending=[s] err=<nil>",
		"8s s done",
		"8s c start", "8s f start", "8s s start",
		"9s c done",
		"11s f fails",
		"12s s done",
		"12s ALL_COMPLETED: done=[s c x f] pending=[] err=<nil>",
	})
}

// WAIT-4: on timeout the split is returned, nothing raised or cancelled.
func TestWAIT4_Timeout(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		a := CreateTask(tk, sleeper(r, "a", time.Second, 0))
		b := CreateTask(tk, sleeper(r, "b", time.Hour, 0))
		done, pending, err := Wait(tk, []Awaitable{a, b}, 2*time.Second, AllCompleted)
		r.log("done=%d pending=%d err=%v b cancelled=%v", len(done), len(pending), err, b.Cancelling())
		b.Cancel()
		b.Await(tk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start", "0s b start", "1s a done",
		"2s done=1 pending=1 err=<nil> b cancelled=0",
		"2s b: asyncio: cancelled",
	})
}

// WAIT-5: Wait always suspends (2 iterations for done futures), computes
// the split on wake-up, and its cancellation leaves the futures alone.
func TestWAIT5_SuspendsAndSplitsOnWake(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		l := tk.Loop()
		n := 0
		var tick func()
		tick = func() {
			n++
			if n < 10 {
				l.CallSoon(tick)
			}
		}
		l.CallSoon(tick)
		d := NewFuture[int](tk)
		d.SetResult(1)
		Wait(tk, []Awaitable{d}, Never, AllCompleted)
		r.log("iterations=%d", n)

		a, b := NewFuture[int](tk), NewFuture[int](tk)
		l.CallLater(time.Second, func() { a.SetResult(1); b.SetResult(2) })
		done, _, _ := Wait(tk, []Awaitable{a, b}, Never, FirstCompleted)
		r.log("first completed: %d done", len(done))

		c := NewFuture[int](tk)
		w := CreateTask(tk, func(wt *T) (int, error) {
			_, _, err := Wait(wt, []Awaitable{c}, Never, AllCompleted)
			return 0, err
		})
		Sleep(tk, time.Second)
		w.Cancel()
		_, err := w.Await(tk)
		r.log("w: %v c cancelled=%v", err, c.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s iterations=2",
		"1s first completed: 2 done",
		"2s w: asyncio: cancelled c cancelled=false",
	})
}

// ---------------------------------------------------------------- AS_COMPLETED

// ASC-1: inputs are watched and the timer started when AsCompleted is
// called, not when iteration starts; duplicates are dropped.
func TestASC1_StartsAtCall(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		a := CreateTask(tk, sleeper(r, "a", 500*time.Millisecond, 1))
		b := CreateTask(tk, sleeper(r, "b", time.Hour, 2))
		seq := AsCompleted(tk, []Awaitable{a, b, a}, 1500*time.Millisecond)
		Sleep(tk, time.Second)
		for aw, err := range seq {
			r.log("got a=%v err=%s", aw == Awaitable(a), func() string {
				if err == nil {
					return "<nil>"
				}
				return describeTE(err)
			}())
		}
		r.log("b cancelled=%v", b.Cancelling() > 0)
		b.Cancel()
		b.Await(tk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start", "0s b start",
		"500ms a done",
		"1s got a=true err=<nil>",
		"1.5s got a=false err=TE is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false cause=<nil>",
		"1.5s b cancelled=false",
		"1.5s b: asyncio: cancelled",
	})
}

// ASC-2: the original awaitables in completion order.
func TestASC2_CompletionOrder(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		a := CreateTask(tk, sleeper(r, "a", 3*time.Second, 1))
		b := CreateTask(tk, sleeper(r, "b", time.Second, 2))
		c := CreateTask(tk, failer(r, "c", 2*time.Second, errBoom))
		for aw, err := range AsCompletedOf(tk, []AwaitableOf[int]{a, b, c}, Never) {
			v, verr := aw.Result()
			r.log("%v %v (%v)", v, verr, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s a start", "0s b start", "0s c start",
		"1s b done", "1s 2 <nil> (<nil>)",
		"2s c fails", "2s 0 boom (<nil>)",
		"3s a done", "3s 1 <nil> (<nil>)",
	})
}

// ASC-4: exactly one item per distinct input; breaking out early is fine;
// a cancellation of the iterating task ends the sequence with it.
func TestASC4_CountsAndCancellation(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *recorder) error {
		fs := []Awaitable{fut2(tk, "x"), fut2(tk, "y")}
		fs = append(fs, fs[0])
		n := 0
		for range AsCompleted(tk, fs, Never) {
			n++
		}
		r.log("items=%d", n)
		for range AsCompleted(tk, fs, Never) {
			break
		}
		p := NewFuture[int](tk)
		w := CreateTask(tk, func(wt *T) (int, error) {
			for _, err := range AsCompleted(wt, []Awaitable{p}, Never) {
				r.log("w got %v", err)
				return 0, err
			}
			return 0, nil
		})
		Sleep(tk, time.Second)
		w.Cancel()
		w.Await(tk)
		r.log("p cancelled=%v", p.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkLog(t, r, []string{
		"0s items=2",
		"1s w got asyncio: cancelled",
		"1s p cancelled=false",
	})
}
