package asyncio

import (
	"fmt"
	"testing"
	"time"
)

func TestCANCEL1_CancelCountsAndNeverRunsTaskCode(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	never := NewFuture[int](l)
	tk := CreateTask(l, func(t *T) (int, error) {
		_, err := never.Await(t)
		r.log("task sees %s", describe(err))
		return 0, err
	})
	runOne(t, l)
	r.log("cancel: %v", tk.Cancel())
	r.log("cancel again: %v cancelling=%d waiter cancelled=%v", tk.Cancel(), tk.Cancelling(), never.Cancelled())
	l.RunUntilComplete(tk)
	r.log("cancel done: %v cancelling=%d", tk.Cancel(), tk.Cancelling())
	checkEvents(t, []string{"cancel: true", "cancel again: true cancelling=2 waiter cancelled=true",
		`task sees CancelledError("")`, "cancel done: false cancelling=2"}, &r)
}

func TestCANCEL2_SelfCancelDeliveredAtNextSuspension(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	done := NewFuture[int](l)
	done.SetResult(1)
	tk := CreateTask(l, func(t *T) (int, error) {
		t.Cancel("self")
		_, err := done.Await(t)
		r.log("await done future: %v", err)
		err = Sleep(t, 0)
		r.log("sleep(0): %s", describe(err))
		return 0, err
	})
	l.RunUntilComplete(tk)
	r.log("cancelled=%v", tk.Cancelled())
	// Returning without suspending still ends the task cancelled.
	tk2 := CreateTask(l, func(t *T) (int, error) { t.Cancel("bye"); return 5, nil })
	err := l.RunUntilComplete(tk2)
	r.log("returned: %s cancelled=%v", describe(err), tk2.Cancelled())
	checkEvents(t, []string{"await done future: <nil>", `sleep(0): CancelledError("self")`, "cancelled=true",
		`returned: CancelledError("bye") cancelled=true`}, &r)
}

func TestCANCEL3_CancelledBeforeFirstStepNeverRuns(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) { r.log("body ran"); return 1, nil })
	tk.Cancel("early")
	err := l.RunUntilComplete(tk)
	r.log("%s cancelled=%v started goroutine=%v", describe(err), tk.Cancelled(), tk.t.sw.created())
	checkEvents(t, []string{`CancelledError("early") cancelled=true started goroutine=false`}, &r)
}

func TestCANCEL4_ResultRaceLosesValue(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	f := NewFuture[int](l)
	tk := CreateTask(l, func(t *T) (int, error) {
		v, err := f.Await(t)
		r.log("task got %d %s", v, describe(err))
		return v, err
	})
	runOne(t, l)
	l.CallSoon(func() {
		f.SetResult(42)
		r.log("cancel after result: %v", tk.Cancel())
	})
	l.RunUntilComplete(tk)
	v, _ := f.Result()
	r.log("task cancelled=%v, future still holds %d", tk.Cancelled(), v)
	checkEvents(t, []string{"cancel after result: true", `task got 0 CancelledError("")`, "task cancelled=true, future still holds 42"}, &r)
}

func TestCANCEL5_ChainCancelsInnerTask(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	inner := CreateTask(l, func(t *T) (string, error) {
		err := Sleep(t, time.Hour)
		r.log("inner sees %s, swallows it", describe(err))
		return "inner value", nil
	})
	outer := CreateTask(l, func(t *T) (string, error) {
		v, err := inner.Await(t)
		r.log("outer got %q %v", v, err)
		return v, err
	})
	runOne(t, l)
	r.log("cancel outer: %v", outer.Cancel("stop"))
	if err := l.RunUntilComplete(outer); err != nil {
		t.Fatal(err)
	}
	r.log("outer cancelled=%v cancelling=%d; inner cancelling=%d", outer.Cancelled(), outer.Cancelling(), inner.Cancelling())
	checkEvents(t, []string{"cancel outer: true", `inner sees CancelledError("stop"), swallows it`, `outer got "inner value" <nil>`,
		"outer cancelled=false cancelling=1; inner cancelling=1"}, &r)
}

func TestCANCEL6_Messages(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	leaf := func(name string) func(*T) (int, error) {
		return func(t *T) (int, error) {
			err := Sleep(t, time.Hour)
			r.log("%s: %s", name, describe(err))
			return 0, err
		}
	}
	// Through nested awaits; repeated cancels while waiting: first wins.
	inner := CreateTask(l, leaf("nested inner"))
	outer := CreateTask(l, func(t *T) (int, error) {
		_, err := inner.Await(t)
		r.log("nested outer: %s", describe(err))
		return 0, err
	})
	runOne(t, l)
	outer.Cancel("stop it")
	outer.Cancel("second")
	l.RunUntilComplete(outer)
	// Repeated cancels before the task runs: last wins.
	fresh := CreateTask(l, leaf("fresh"))
	fresh.Cancel("first")
	fresh.Cancel("second")
	r.log("fresh: %s", describe(l.RunUntilComplete(fresh)))
	started := CreateTask(l, func(t *T) (int, error) {
		t.Cancel("one")
		t.Cancel("two")
		err := Sleep(t, 0)
		r.log("self twice: %s", describe(err))
		return 0, err
	})
	l.RunUntilComplete(started)
	checkEvents(t, []string{`nested inner: CancelledError("stop it")`, `nested outer: CancelledError("stop it")`, `fresh: CancelledError("second")`,
		`self twice: CancelledError("two")`}, &r)
}

func TestCANCEL7_CancellingNeverResetAndUncancelFloors(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) {
		for range 3 {
			err := Sleep(t, time.Hour)
			r.log("caught %s cancelling=%d", describe(err), t.Cancelling())
		}
		return 7, nil
	})
	for i := range 3 {
		runOne(t, l)
		tk.Cancel(fmt.Sprint(i))
	}
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	r.log("done: cancelling=%d", tk.Cancelling())
	r.log("uncancel: %d %d %d %d", tk.Uncancel(), tk.Uncancel(), tk.Uncancel(), tk.Uncancel())
	checkEvents(t, []string{`caught CancelledError("0") cancelling=1`, `caught CancelledError("1") cancelling=2`, `caught CancelledError("2") cancelling=3`,
		"done: cancelling=3", "uncancel: 2 1 0 0"}, &r)
}

func TestCANCEL7_UncancelClearsPendingCancel313(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) {
		r.log("body runs")
		err := Sleep(t, 0)
		r.log("sleep: %v", err)
		t.Cancel("self")
		r.log("uncancel: %d", t.Uncancel())
		err = Sleep(t, 0)
		r.log("sleep after self cancel+uncancel: %v", err)
		return 1, nil
	})
	tk.Cancel()
	r.log("uncancel before first step: %d", tk.Uncancel())
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	// With two requests, one uncancel keeps the cancellation pending.
	tk2 := CreateTask(l, func(t *T) (int, error) { r.log("tk2 body runs"); return 1, nil })
	tk2.Cancel()
	tk2.Cancel()
	r.log("tk2 uncancel: %d", tk2.Uncancel())
	err := l.RunUntilComplete(tk2)
	r.log("tk2: %s", describe(err))
	checkEvents(t, []string{"uncancel before first step: 0", "body runs", "sleep: <nil>", "uncancel: 0",
		"sleep after self cancel+uncancel: <nil>", "tk2 uncancel: 1", `tk2: CancelledError("")`}, &r)
}

func TestCANCEL9_CancelledIffCancellationEndsTheTask(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	own := CreateTask(l, func(t *T) (int, error) { return 0, &CancelledError{Msg: "own"} })
	wrapped := CreateTask(l, func(t *T) (int, error) { return 0, fmt.Errorf("wrapped: %w", &CancelledError{Msg: "w"}) })
	swallowed := CreateTask(l, func(t *T) (int, error) {
		if err := Sleep(t, time.Hour); err != nil {
			return 9, nil
		}
		return 0, nil
	})
	runOne(t, l)
	swallowed.Cancel()
	for _, tk := range []*Task[int]{own, wrapped, swallowed} {
		err := l.RunUntilComplete(tk)
		v, _ := tk.Result()
		r.log("cancelled=%v err=%s v=%d", tk.Cancelled(), describe(err), v)
	}
	checkEvents(t, []string{
		`cancelled=true err=CancelledError("own") v=0`,
		`cancelled=true err=*fmt.wrapError("wrapped: asyncio: cancelled: w") wrapping CancelledError("w") v=0`,
		"cancelled=false err=<nil> v=9",
	}, &r)
	// The first retrieval returns the task's own error, wrapping included.
	if err := wrapped.Err(); err == nil {
		t.Error("a cancelled task must keep reporting a cancellation")
	}
}

func TestCANCEL10_AwaitCancelledFuture(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	f := NewFuture[int](l)
	tk := CreateTask(l, func(t *T) (int, error) { return f.Await(t) })
	l.CallLater(time.Second, func() { f.Cancel("fut") })
	err := l.RunUntilComplete(tk)
	r.log("%s cancelled=%v cancelling=%d", describe(err), tk.Cancelled(), tk.Cancelling())
	checkEvents(t, []string{`CancelledError("fut") cancelled=true cancelling=0`}, &r)
}

func TestCANCEL11_SecondAwaiterLosesMessage(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	target := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
	waiter := func(name string) func(*T) (int, error) {
		return func(t *T) (int, error) {
			_, err := target.Await(t)
			r.log("%s: %s", name, describe(err))
			return 0, nil
		}
	}
	a := CreateTask(l, waiter("first"))
	b := CreateTask(l, waiter("second"))
	runOne(t, l)
	target.Cancel("MSG")
	l.RunUntilComplete(a)
	l.RunUntilComplete(b)
	checkEvents(t, []string{`first: CancelledError("MSG")`, `second: CancelledError("")`}, &r)
}

func TestCANCEL8_CoreNeverUncancels(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	inner := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
	tk := CreateTask(l, func(t *T) (int, error) {
		awaits := []func() error{
			func() error { return Sleep(t, time.Hour) },
			func() error { return Sleep(t, 0) },
			func() error { _, err := NewFuture[int](t).Await(t); return err },
			func() error { return t.Await(inner) },
		}
		for i, await := range awaits {
			err := await()
			r.log("await %d: %s cancelling=%d", i, describe(err), t.Cancelling())
		}
		return 0, nil
	})
	for range 4 {
		runOne(t, l)
		tk.Cancel()
	}
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`await 0: CancelledError("") cancelling=1`, `await 1: CancelledError("") cancelling=2`,
		`await 2: CancelledError("") cancelling=3`, `await 3: CancelledError("") cancelling=4`}, &r)
}
