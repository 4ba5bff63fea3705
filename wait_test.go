package asyncio

import (
	"errors"
	"testing"
	"time"
)

func names(aws []Awaitable, byAw map[Awaitable]string) []string {
	out := []string{}
	for _, a := range aws {
		out = append(out, byAw[a])
	}
	return out
}

// WAIT-1: argument errors.
func TestWAIT1_ArgumentErrors(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		_, _, err := Wait(tk, []Awaitable(nil), Never, AllCompleted)
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
	checkEvents(t, []string{
		`0s "Set of Tasks/Futures is empty." is=true`,
		`0s "Invalid return_when value: 7"`,
	}, r)
}

// WAIT-2, WAIT-3: de-duplication and the three return conditions.
func TestWAIT3_ReturnWhen(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		for _, when := range []ReturnWhen{FirstCompleted, FirstException, AllCompleted} {
			c := CreateTask(tk, sleeper(r, "c", time.Second, 0))
			x := CreateTask(tk, func(ctk *T) (int, error) { return 0, Sleep(ctk, time.Hour) })
			tk.Loop().CallLater(2*time.Second, func() { x.Cancel() }) // a cancellation is no exception
			f := CreateTask(tk, failer(r, "f", 3*time.Second, errBoom))
			s := CreateTask(tk, sleeper(r, "s", 4*time.Second, 0))
			byAw := map[Awaitable]string{c: "c", x: "x", f: "f", s: "s"}
			done, pending, err := Wait(tk, []Awaitable{s, c, x, c, f}, Never, when)
			r.log("%v: done=%v pending=%v err=%v", when, names(done, byAw), names(pending, byAw), err)
			//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
			Wait(tk, pending, Never, AllCompleted)
			f.Err() // read, or Close reports it as never retrieved
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
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
	}, r)
}

// WAIT-4: on timeout the split is returned, nothing raised or cancelled.
func TestWAIT4_Timeout(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		a := CreateTask(tk, sleeper(r, "a", time.Second, 0))
		b := CreateTask(tk, sleeper(r, "b", time.Hour, 0))
		done, pending, err := Wait(tk, []Awaitable{a, b}, 2*time.Second, AllCompleted)
		r.log("done=%d pending=%d err=%v b cancelled=%v", len(done), len(pending), err, b.Cancelling())
		b.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b.Await(tk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s a start", "0s b start", "1s a done",
		"2s done=1 pending=1 err=<nil> b cancelled=0",
		"2s b: asyncio: cancelled",
	}, r)
}

// WAIT-5: Wait always suspends (2 iterations for done futures), computes
// the split on wake-up, and its cancellation leaves the futures alone.
func TestWAIT5_SuspendsAndSplitsOnWake(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
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
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Wait(tk, []Awaitable{d}, Never, AllCompleted)
		r.log("iterations=%d", n)

		a, b := NewFuture[int](tk), NewFuture[int](tk)
		l.CallLater(time.Second, func() { a.SetResult(1); b.SetResult(2) })
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		done, _, _ := Wait(tk, []Awaitable{a, b}, Never, FirstCompleted)
		r.log("first completed: %d done", len(done))

		c := NewFuture[int](tk)
		w := CreateTask(tk, func(wt *T) (int, error) {
			_, _, err := Wait(wt, []Awaitable{c}, Never, AllCompleted)
			return 0, err
		})
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, time.Second)
		w.Cancel()
		_, err := w.Await(tk)
		r.log("w: %v c cancelled=%v", err, c.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s iterations=2",
		"1s first completed: 2 done",
		"2s w: asyncio: cancelled c cancelled=false",
	}, r)
}

// ASC-1: inputs are watched and the timer started when AsCompleted is
// called, not when iteration starts; duplicates are dropped.
func TestASC1_StartsAtCall(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		a := CreateTask(tk, sleeper(r, "a", 500*time.Millisecond, 1))
		b := CreateTask(tk, sleeper(r, "b", time.Hour, 2))
		seq := AsCompleted(tk, []Awaitable{a, b, a}, 1500*time.Millisecond)
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, time.Second)
		for aw, err := range seq {
			r.log("got a=%v err=%s", aw == Awaitable(a), func() string {
				if err == nil {
					return "<nil>"
				}
				return timeoutTraits(err)
			}())
		}
		r.log("b cancelled=%v", b.Cancelling() > 0)
		b.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		b.Await(tk)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s a start", "0s b start",
		"500ms a done",
		"1s got a=true err=<nil>",
		"1.5s got a=false err=TimeoutError(cause=<nil>) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false",
		"1.5s b cancelled=false",
		"1.5s b: asyncio: cancelled",
	}, r)
}

// ASC-2: the original awaitables in completion order.
func TestASC2_CompletionOrder(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
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
	checkEvents(t, []string{
		"0s a start", "0s b start", "0s c start",
		"1s b done", "1s 2 <nil> (<nil>)",
		"2s c fails", "2s 0 boom (<nil>)",
		"3s a done", "3s 1 <nil> (<nil>)",
	}, r)
}

// ASC-4: exactly one item per distinct input; breaking out early is fine;
// a cancellation of the iterating task ends the sequence with it.
func TestASC4_CountsAndCancellation(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		fs := []Awaitable{doneFuture(tk, "x"), doneFuture(tk, "y")}
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
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, time.Second)
		w.Cancel()
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		w.Await(tk)
		r.log("p cancelled=%v", p.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s items=2",
		"1s w got asyncio: cancelled",
		"1s p cancelled=false",
	}, r)
}

// Wait and AsCompleted take a []*Task[V] directly and give the same type
// back; Gather takes it through Awaitables.
func TestWaitGatherTypedSlices(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		tasks := []*Task[int]{
			CreateTask(tk, sleeper(&r, "a", 2*time.Second, 1)),
			CreateTask(tk, sleeper(&r, "b", time.Second, 2)),
		}
		done, pending, err := Wait(tk, tasks, Never, FirstCompleted)
		v, _ := done[0].Result() // typed: *Task[int]
		r.log("wait: done %d (value %d), pending %d, %v", len(done), v, len(pending), err)
		for tk2, err := range AsCompleted(tk, tasks, Never) {
			v, _ := tk2.Result()
			r.log("as completed: %d %v", v, err)
		}
		res, err := Gather(tk, Awaitables(tasks)...).Await(tk)
		r.log("gather: %v %v", res, err)
		return nil
	})
	checkEvents(t, []string{
		"a start", "b start", "b done",
		"wait: done 1 (value 2), pending 1, <nil>",
		"as completed: 2 <nil>", "a done", "as completed: 1 <nil>",
		"gather: [1 2] <nil>",
	}, &r)
}
