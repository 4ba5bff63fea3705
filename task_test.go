package asyncio

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// iterations counts loop iterations: a callback that reschedules itself
// runs once in every iteration, before anything queued after it.
func iterations(l *Loop) *int {
	n := new(int)
	var tick func()
	tick = func() { *n++; l.CallSoon(tick) }
	l.CallSoon(tick)
	return n
}

func TestTASK1_FirstStepScheduledWithCallSoon(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	child := func(name string) func(*T) (int, error) {
		return func(t *T) (int, error) {
			r.log("%s.step1", name)
			if err := Sleep(t, 0); err != nil {
				return 0, err
			}
			r.log("%s.step2", name)
			return 0, nil
		}
	}
	main := CreateTask(l, func(t *T) (int, error) {
		t1 := CreateTask(t, child("t1"))
		t2 := CreateTask(t, child("t2"))
		r.log("parent created")
		if err := Sleep(t, 0); err != nil {
			return 0, err
		}
		r.log("parent")
		if _, err := t1.Await(t); err != nil {
			return 0, err
		}
		return t2.Await(t)
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"parent created", "t1.step1", "t2.step1", "parent", "t1.step2", "t2.step2"}, &r)
}

func TestTASK2_DefaultNamesShareOneCounter(t *testing.T) {
	l1, l2 := NewTestLoop(), NewTestLoop()
	defer mustClose(t, l1)
	defer mustClose(t, l2)
	body := func(*T) (int, error) { return 0, nil }
	a := CreateTask(l1, body)
	named := CreateTask(l1, body, WithName("custom"))
	b := CreateTask(l2, body)
	n, err := strconv.Atoi(strings.TrimPrefix(a.Name(), "Task-"))
	if err != nil {
		t.Fatalf("default name %q", a.Name())
	}
	got := []string{named.Name(), b.Name(), named.T().Name()}
	want := []string{"custom", fmt.Sprintf("Task-%d", n+1), "custom"}
	named.T().SetName("renamed")
	got = append(got, named.Name())
	want = append(want, "renamed")
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	for _, l := range []*Loop{l1, l2} {
		runOne(t, l)
	}
}

// TestTASK2_DefaultNameFormattedLazilyKeepsItsNumber checks the lazily
// formatted default name: it carries the number drawn at creation (not
// at first use), SetName replaces it for good (also with ""), and
// WithName("") keeps "" and draws no number, as create_task(name="")
// does (only name=None draws one).
func TestTASK2_DefaultNameFormattedLazilyKeepsItsNumber(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	body := func(*T) (int, error) { return 0, nil }
	a := CreateTask(l, body)
	b := CreateTask(l, body, WithName(""))
	c := CreateTask(l, body)
	c.SetName("")
	d := CreateTask(l, body)
	d.SetName("d")
	e := CreateTask(l, body)
	// Ask e first: its number is still the one drawn at its creation,
	// after a's, c's and d's (b drew none).
	en, an := e.Name(), a.T().Name()
	got := []string{an, b.Name(), c.Name(), d.T().Name(), en, a.T().String()}
	if !strings.HasPrefix(an, "Task-") {
		t.Fatalf("default name %q", an)
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimPrefix(an, "Task-"), &n); err != nil {
		t.Fatal(err)
	}
	want := []string{an, "", "", "d", "Task-" + strconv.Itoa(n+3), "<Task pending name='" + an + "'>"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if err := l.RunUntilComplete(d); err != nil {
		t.Fatal(err)
	}
}

// asyncio.run's Runner.close runs two tasks (shutdown_asyncgens,
// shutdown_default_executor), so each Run uses up two numbers after its
// own tasks: a second Run's main is numbered as in CPython.
func TestTASK2_RunnerCloseDrawsTwoNumbers(t *testing.T) {
	var names []string
	main := func(tk *T) (int, error) {
		names = append(names, tk.Name(), CreateTask(tk, func(*T) (int, error) { return 0, nil }).Name())
		return 0, nil
	}
	for range 2 {
		if _, err := Run(main); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if _, err := fmt.Sscan(strings.TrimPrefix(names[0], "Task-"), &n); err != nil {
		t.Fatal(names, err)
	}
	want := []string{names[0], fmt.Sprintf("Task-%d", n+1), fmt.Sprintf("Task-%d", n+4), fmt.Sprintf("Task-%d", n+5)}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
}

func TestTASK3_AwaitItselfThrowsRuntimeError(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) {
		err := t.Await(t)
		r.log("await self: runtime=%v msg=%v", errors.Is(err, ErrRuntime), strings.Contains(fmt.Sprint(err), "Task cannot await on itself"))
		return 1, nil
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"await self: runtime=true msg=true"}, &r)
}

func TestTASK4_WakeupReadsResult(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	inner := CreateTask(l, func(t *T) (string, error) {
		if err := Sleep(t, time.Second); err != nil {
			return "", err
		}
		return "inner value", nil
	})
	failing := CreateTask(l, func(t *T) (string, error) { return "", errors.New("inner failure") })
	outer := CreateTask(l, func(t *T) (int, error) {
		v, err := inner.Await(t)
		r.log("inner: %q %v", v, err)
		v, err = failing.Await(t)
		r.log("failing: %q %v", v, err)
		r.log("untyped: %v", t.Await(inner))
		return 0, nil
	})
	if err := l.RunUntilComplete(outer); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`inner: "inner value" <nil>`, `failing: "" inner failure`, "untyped: <nil>"}, &r)
}

func TestTASK5_IterationCosts(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	n := iterations(l)
	tk := CreateTask(l, func(t *T) (int, error) {
		done := NewFuture[int](t)
		done.SetResult(1)
		before := *n
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		done.Await(t)
		r.log("await done future: %d", *n-before)
		before = *n
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(t, 0)
		r.log("sleep(0): %d", *n-before)
		before = *n
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(t, -time.Second)
		r.log("sleep(-1s): %d", *n-before)
		f := NewFuture[int](t)
		l.CallSoon(func() { f.SetResult(2) })
		before = *n
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		f.Await(t)
		r.log("await future set by call_soon: %d", *n-before)
		return 0, nil
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"await done future: 0", "sleep(0): 1", "sleep(-1s): 1", "await future set by call_soon: 2"}, &r)
}

func TestTASK6_WaitersResumeInAwaitOrder(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	f := NewFuture[int](l)
	target := CreateTask(l, func(t *T) (int, error) { return f.Await(t) }, WithName("target"))
	target.AddDoneCallback(r.logFn("target done callback"))
	waiter := func(name string, aw AwaitableOf[int]) func(*T) (int, error) {
		return func(t *T) (int, error) {
			v, err := aw.Await(t)
			r.log("%s resumed with %d", name, v)
			return v, err
		}
	}
	var tasks []Awaitable
	for _, name := range []string{"w1", "w2", "w3"} {
		tasks = append(tasks, CreateTask(l, waiter(name, f)))
	}
	tasks = append(tasks, CreateTask(l, waiter("on task", target)))
	runOne(t, l) // everybody awaits now
	l.CallSoon(func() {
		l.CallSoon(r.logFn("queued before the wakeups"))
		f.SetResult(5)
	})
	for _, tk := range tasks {
		if err := l.RunUntilComplete(tk); err != nil {
			t.Fatal(err)
		}
	}
	checkEvents(t, []string{"queued before the wakeups", "w1 resumed with 5", "w2 resumed with 5", "w3 resumed with 5",
		"target done callback", "on task resumed with 5"}, &r)
}

func TestTASK7_TaskRejectsSetResult(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(*T) (int, error) { return 1, nil })
	// asyncio raises RuntimeError at run time; here a task has no such
	// methods, so the mistake does not compile.
	for _, m := range []string{"SetResult", "SetException"} {
		if _, ok := reflect.TypeOf(tk).MethodByName(m); ok {
			t.Errorf("*Task has a %s method", m)
		}
	}
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	if v, _ := tk.Result(); v != 1 {
		t.Errorf("result %d", v)
	}
}

func TestTASK8_CurrentTaskAndAllTasks(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	names := func() string {
		var s []string
		for _, tk := range AllTasks(l) {
			s = append(s, tk.Name())
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	//asynciovet:ignore unawaitedtask the test creates a task it does not await on purpose (scheduling order or pending-task reporting)
	CreateTask(l, func(*T) (int, error) { return 0, nil }, WithName("quick"))
	main := CreateTask(l, func(t *T) (int, error) {
		r.log("current is me: %v", CurrentTask(l) == t)
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(t, 0)
		r.log("all: %s", names())
		l.CallSoon(func() { r.log("in callback: %v", CurrentTask(l)) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(t, 0)
		return 0, nil
	}, WithName("main"))
	sleeper := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) }, WithName("sleeper"))
	defer func() { sleeper.Cancel(); l.RunUntilComplete(sleeper) }()
	r.log("before run: %s current=%v", names(), CurrentTask(l))
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	r.log("after: %s", names())
	checkEvents(t, []string{"before run: main,quick,sleeper current=<nil>", "current is me: true",
		"all: main,sleeper", "in callback: <nil>", "after: sleeper"}, &r)
}

func TestTASK9_PendingAtCloseReportedAndUnwound(t *testing.T) {
	l := NewTestLoop()
	var r eventLog
	ctxs := handlerLog(l, &r)
	never := NewFuture[int](l)
	started := CreateTask(l, func(t *T) (int, error) {
		defer func() {
			err := Sleep(t, time.Second) // an await while unwinding returns at once
			r.log("deferred in started: cancelled=%v", IsCancelled(err))
		}()
		return never.Await(t)
	}, WithName("started"))
	runOne(t, l)
	//asynciovet:ignore unawaitedtask the test creates a task it does not await on purpose (scheduling order or pending-task reporting)
	CreateTask(l, func(t *T) (int, error) { r.log("never runs"); return 0, nil }, WithName("unstarted"))
	mustClose(t, l)
	var names []string
	for _, c := range *ctxs {
		names = append(names, c.Task.Name())
	}
	slices.Sort(names)
	r.log("tasks: %v", names)
	r.log("started still pending: %v", !started.Done())
	slices.Sort(r.events[:2]) // the report order among tasks is unspecified
	checkEvents(t, []string{
		"deferred in started: cancelled=true",
		"handler: Task was destroyed but it is pending!",
		"handler: Task was destroyed but it is pending!",
		"tasks: [started unstarted]",
		"started still pending: true",
	}, &r)
	goleak.VerifyNone(t)
}

func TestSLEEP1_NonPositiveIsOneYield(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) {
		r.log("a1")
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(t, -time.Second)
		r.log("a2 at %v", l.Time())
		return 0, nil
	})
	//asynciovet:ignore unawaitedtask the test creates a task it does not await on purpose (scheduling order or pending-task reporting)
	CreateTask(l, func(t *T) (int, error) { r.log("b"); return 0, nil })
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"a1", "b", "a2 at 0s"}, &r)
}

func TestSLEEP2_CancelledSleepLeavesNoLiveTimer(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := CreateTask(l, func(t *T) (int, error) {
		err := Sleep(t, time.Hour)
		r.log("sleep: %v at %v", err, l.Time())
		return 0, err
	})
	sleeper := CreateTask(l, func(t *T) (int, error) {
		err := Sleep(t, 2*time.Second)
		r.log("normal sleep returned at %v: %v", l.Time(), err)
		return 0, err
	})
	l.CallLater(time.Second, func() { tk.Cancel("enough") })
	l.RunUntilComplete(tk)
	r.log("live timers: %d", len(l.timers)-l.cancelledTimers)
	if err := l.RunUntilComplete(sleeper); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"sleep: asyncio: cancelled: enough at 1s", "live timers: 1", "normal sleep returned at 2s: <nil>"}, &r)
}

func TestTASK3_MustCancelKeepsIncomingCancelledError(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	f := NewFuture[int](l)
	tk := CreateTask(l, func(t *T) (int, error) {
		_, err := f.Await(t)
		r.log("task sees %s", describe(err))
		return 0, err
	})
	runOne(t, l)
	l.CallSoon(func() {
		f.Cancel("future's own")
		r.log("task cancel: %v", tk.Cancel("task's")) // the waiter is done: must_cancel
	})
	l.RunUntilComplete(tk)
	checkEvents(t, []string{"task cancel: true", `task sees CancelledError("future's own")`}, &r)
}

func TestTASK9_PanicWhileUnwindingAtClose(t *testing.T) {
	l := NewTestLoop()
	var r eventLog
	handlerLog(l, &r)
	//asynciovet:ignore unawaitedtask the test creates a task it does not await on purpose (scheduling order or pending-task reporting)
	CreateTask(l, func(t *T) (int, error) {
		defer func() { r.log("outer deferred still runs") }()
		defer panic("panic in deferred cleanup")
		return NewFuture[int](t).Await(t)
	}, WithName("messy"))
	runOne(t, l)
	mustClose(t, l)
	checkEvents(t, []string{"handler: Task was destroyed but it is pending!", "outer deferred still runs",
		"handler: Exception in task messy while unwinding at Close"}, &r)
	goleak.VerifyNone(t)
}

// The untyped task handle *T answers Exception, Err and
// RemoveDoneCallback like the task itself (FUT-3, FUT-6): pending ->
// InvalidStateError, failed -> the error, cancelled -> a CancelledError
// (FUT-8); a removed done callback never runs and removing it
// again removes nothing.
func TestFUT3_FUT6_UntypedTaskHandle(t *testing.T) {
	var log []string
	runVirtual(t, func(at *T) error {
		boom := errors.New("boom")
		failing := CreateTask(at, func(t *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(t, time.Second)
			return 0, boom
		})
		var aw Awaitable = failing.T()
		log = append(log, "pending Err: "+describe(aw.Err()), "pending Err again: "+describe(aw.Err()))
		first := aw.AddDoneCallback(func() { log = append(log, "first callback") })
		aw.AddDoneCallback(func() { log = append(log, "second callback") })
		log = append(log, fmt.Sprintf("removed %d then %d", aw.RemoveDoneCallback(first), aw.RemoveDoneCallback(first)))
		if err := at.Await(aw); err != boom {
			return fmt.Errorf("await: %v", err)
		}
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(at, 0) // the done callbacks run before this task resumes again
		log = append(log, "Err: "+describe(aw.Err()), "Err again: "+describe(aw.Err()))

		cancelled := CreateTask(at, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(at, 0)
		cancelled.T().Cancel("stop")
		log = append(log, "cancelled Await: "+describe(at.Await(cancelled.T())))
		log = append(log, "cancelled Err: "+describe(cancelled.T().Err()), "cancelled Err again: "+describe(cancelled.T().Err()))
		return nil
	})
	want := []string{
		`pending Err: InvalidStateError("Exception is not set.")`,
		`pending Err again: InvalidStateError("Exception is not set.")`,
		"removed 1 then 0",
		"second callback",
		`Err: *errors.errorString("boom")`,
		`Err again: *errors.errorString("boom")`,
		// FUT-8: the first retrieval gets the original CE with its
		// message, later ones a fresh CE without (a task stores none).
		`cancelled Await: CancelledError("stop")`,
		`cancelled Err: CancelledError("")`,
		`cancelled Err again: CancelledError("")`,
	}
	if d := cmp.Diff(want, log); d != "" {
		t.Fatal(d)
	}
}

// TASK-10: an eager task that finishes without suspending is done when
// CreateTask returns; it was the current task during its step, and
// AllTasks listed it then but not afterwards.
func TestTASK10_EagerTaskFinishesInsideCreateTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var inside *T
		var listed bool
		child := CreateTask(tk, func(ct *T) (string, error) {
			inside = CurrentTask(ct)
			listed = slices.Contains(AllTasks(ct), ct)
			r.log("child runs")
			return "hello", nil
		}, WithEagerStart())
		r.log("created: done=%v current-was-child=%v listed=%v now-listed=%v current=%s",
			child.Done(), inside == child.T(), listed, slices.Contains(AllTasks(tk), child.T()), CurrentTask(tk).Name())
		r.log("cancel after completion=%v", child.Cancel())
		v, err := child.Await(tk)
		r.log("await: %v %v cancelled=%v", v, err, child.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s child runs",
		"0s created: done=true current-was-child=true listed=true now-listed=false current=main",
		"0s cancel after completion=false",
		"0s await: hello <nil> cancelled=false",
	}, r)
}

// TASK-10: the eager step ends at the first suspension, a bare yield
// included (the next step is queued behind what is ready already); the
// task then goes on as usual and stays listed until it finishes.
func TestTASK10_EagerStepEndsAtFirstSuspension(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		tk.Loop().CallSoon(r.logFn("callback queued before"))
		yielder := CreateTask(tk, func(ct *T) (int, error) {
			r.log("yielder step 1")
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			Sleep(ct, 0)
			r.log("yielder step 2")
			return 1, nil
		}, WithEagerStart())
		sleeper := CreateTask(tk, func(ct *T) (int, error) {
			r.log("sleeper step 1")
			if err := Sleep(ct, time.Second); err != nil {
				return 0, err
			}
			r.log("sleeper step 2, current=%v", CurrentTask(ct) == ct)
			return 2, nil
		}, WithEagerStart())
		r.log("created: done=%v,%v listed=%v", yielder.Done(), sleeper.Done(), slices.Contains(AllTasks(tk), sleeper.T()))
		_, err := Gather[int](tk, yielder, sleeper).Await(tk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s yielder step 1",
		"0s sleeper step 1",
		"0s created: done=false,false listed=true",
		"0s callback queued before",
		"0s yielder step 2",
		"1s sleeper step 2, current=true",
	}, r)
}

// TASK-10: without a running loop the first step is queued as usual.
func TestTASK10_EagerNeedsARunningLoop(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	task := CreateTask(l, func(*T) (int, error) { r.log("step"); return 1, nil }, WithEagerStart())
	r.log("created, done=%v", task.Done())
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"created, done=false", "step"}, &r)
}

// TASK-10: a cancellation requested during the eager step (here the task
// cancels itself) is delivered at its first suspension; one requested
// after it, while the task sleeps, through the sleep.
func TestTASK10_EagerCancellation(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		self := CreateTask(tk, func(ct *T) (int, error) {
			ct.Cancel("self")
			r.log("self-cancelled, still running")
			err := Sleep(ct, time.Second)
			r.log("sleep: %v", err)
			return 0, err
		}, WithEagerStart())
		later := CreateTask(tk, func(ct *T) (int, error) { return 0, Sleep(ct, time.Second) }, WithEagerStart())
		r.log("cancel=%v cancelling=%d", later.Cancel("cancellation message"), later.Cancelling())
		_, err1 := self.Await(tk)
		_, err2 := later.Await(tk)
		r.log("self: %v; later: %v", err1, err2)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s self-cancelled, still running",
		"0s cancel=true cancelling=1",
		"0s sleep: asyncio: cancelled: self",
		"0s self: asyncio: cancelled: self; later: asyncio: cancelled: cancellation message",
	}, r)
}

// TASK-10: eager steps nest (an eager task creating one), run from a plain
// callback too (CurrentTask is nil again afterwards), and a panic in an
// eager step fails that task only.
func TestTASK10_EagerNestingCallbacksAndPanics(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		outer := CreateTask(tk, func(ct *T) (int, error) {
			inner := CreateTask(ct, func(it *T) (int, error) {
				r.log("inner: current=%s", CurrentTask(it).Name())
				return 1, Sleep(it, 0)
			}, WithEagerStart(), WithName("inner"))
			r.log("outer: current=%s inner done=%v", CurrentTask(ct).Name(), inner.Done())
			return inner.Await(ct)
		}, WithEagerStart(), WithName("outer"))
		var fromCallback *Task[int]
		done := NewFuture[struct{}](tk)
		tk.Loop().CallSoon(func() {
			fromCallback = CreateTask(tk, func(ct *T) (int, error) {
				r.log("from callback: current=%s", CurrentTask(ct).Name())
				return 2, nil
			}, WithEagerStart(), WithName("cb-child"))
			r.log("callback: current=%v child done=%v", CurrentTask(tk), fromCallback.Done())
			done.SetResult(struct{}{})
		})
		panicky := CreateTask(tk, func(*T) (int, error) { panic("boom") }, WithEagerStart())
		r.log("panicky done=%v err=%v", panicky.Done(), panicky.Err())
		if _, err := done.Await(tk); err != nil {
			return err
		}
		v, err := outer.Await(tk)
		r.log("outer: %v %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s inner: current=inner",
		"0s outer: current=outer inner done=false",
		"0s panicky done=true err=asyncio: panic: boom",
		"0s from callback: current=cb-child",
		"0s callback: current=<nil> child done=true",
		"0s outer: 1 <nil>",
	}, r)
}

// TASK-10: WithEagerTasks makes every task of the loop eager: TaskGroup
// children and GatherFuncs' tasks that finish synchronously never take a
// scheduled step (asyncio's eager_task_factory).
func TestTASK10_EagerTasksLoopOption(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithEagerTasks())
	defer mustClose(t, l)
	var r eventLog
	main := CreateTask(l, func(tk *T) (int, error) {
		iters := iterations(tk.Loop())
		err := TaskGroup(tk, func(g *Group) error {
			for i := range 3 {
				c, _ := Spawn(g, func(*T) (int, error) { return i, nil })
				r.log("spawned %d done=%v", i, c.Done())
			}
			return nil
		})
		g := GatherFuncs(tk, func(*T) (int, error) { return 1, nil }, func(*T) (int, error) { return 2, nil })
		r.log("group: %v; gather done on return=%v; iterations=%d", err, g.Done(), *iters)
		return 0, nil
	})
	r.log("main done before the loop runs=%v", main.Done())
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"main done before the loop runs=false",
		"spawned 0 done=true",
		"spawned 1 done=true",
		"spawned 2 done=true",
		// The group still handles its done children through done
		// callbacks (gh-128550): one iteration runs them, the next wakes
		// main.
		"group: <nil>; gather done on return=true; iterations=2",
	}, &r)
}

// graphOp is one step of a fuzzed task graph (FuzzTaskGraph).
type graphOp struct {
	kind, a, b byte
	body       []graphOp // spawn, taskgroup, timeout: what runs inside
}

// parseGraph reads a body of at most 6 steps from prog, nesting at most 4
// deep and at most 80 steps in all, so every graph is finite.
func parseGraph(prog *[]byte, depth int, budget *int) []graphOp {
	next := func() byte {
		if len(*prog) == 0 {
			return 0
		}
		b := (*prog)[0]
		*prog = (*prog)[1:]
		return b
	}
	var ops []graphOp
	for n := int(next() % 7); n > 0 && *budget > 0 && len(*prog) > 0; n-- {
		*budget--
		op := graphOp{kind: next() % 13, a: next(), b: next()}
		if (op.kind == 1 || op.kind == 6 || op.kind == 8) && depth < 4 {
			op.body = parseGraph(prog, depth+1, budget)
		}
		ops = append(ops, op)
	}
	return ops
}

// FuzzTaskGraph builds a random graph of tasks on the virtual clock from
// the input: tasks that sleep, spawn tasks, cancel and await each other,
// gather, wait_for, shield, run TaskGroups and Timeouts, fail, panic and
// swallow or return cancellations. Whatever the graph: the loop always
// comes back (a graph that awaits in a circle ends with ErrDeadlock), no
// panic escapes it, and once it is closed every task that started has run
// its deferred calls and no goroutine is left.
func FuzzTaskGraph(f *testing.F) {
	f.Add([]byte{3, 1, 0, 0, 2, 0, 1, 0, 3, 0, 0})
	f.Add([]byte{6, 6, 0, 0, 4, 1, 1, 0, 0, 0, 1, 2, 8, 5, 0, 2, 0, 3, 0, 3, 0, 0, 4, 0, 0})
	f.Add([]byte{5, 1, 2, 0, 3, 0, 9, 0, 5, 9, 7, 1, 0, 4, 3, 3, 5, 10, 0, 0, 11, 0, 0, 12, 0, 0})
	f.Add([]byte{4, 8, 200, 0, 2, 0, 3, 0, 6, 1, 0, 1, 0, 0, 1, 4, 2, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 512 {
			return
		}
		opt := goleak.IgnoreCurrent()
		budget := 80
		main := parseGraph(&prog, 0, &budget)
		l := NewTestLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		var tasks []*Task[int]
		started, deferred := 0, 0
		d := func(b byte) time.Duration { return time.Duration(b%4) * time.Millisecond }
		pick := func(b byte) *Task[int] {
			if len(tasks) == 0 {
				return nil
			}
			return tasks[int(b)%len(tasks)]
		}
		var run func(tk *T, ops []graphOp) error
		body := func(ops []graphOp) func(*T) (int, error) {
			return func(tk *T) (int, error) {
				started++
				defer func() { deferred++ }()
				return len(ops), run(tk, ops)
			}
		}
		run = func(tk *T, ops []graphOp) error {
			for _, op := range ops {
				var err error
				switch op.kind {
				case 0:
					err = Sleep(tk, d(op.a))
				case 1:
					tasks = append(tasks, CreateTask(tk, body(op.body)))
				case 2:
					if x := pick(op.a); x != nil {
						x.Cancel()
					}
				case 3:
					if x := pick(op.a); x != nil {
						_, err = x.Await(tk)
					}
				case 4:
					k := min(len(tasks), int(op.a%4))
					aws := make([]AwaitableOf[int], 0, k)
					for _, x := range tasks[len(tasks)-k:] {
						aws = append(aws, x)
					}
					_, err = Gather(tk, aws...).Await(tk)
				case 5:
					if x := pick(op.a); x != nil {
						_, err = WaitFor[int](tk, d(op.b), x)
					}
				case 6:
					err = TaskGroup(tk, func(g *Group) error {
						for _, c := range op.body {
							if c.kind == 1 {
								if x, err := Spawn(g, body(c.body)); err == nil {
									tasks = append(tasks, x)
								}
								continue
							}
							if err := run(tk, []graphOp{c}); err != nil {
								return err
							}
						}
						return nil
					})
				case 7:
					if x := pick(op.a); x != nil {
						_, err = Shield[int](x).Await(tk)
					}
				case 8:
					err = Timeout(tk, d(op.a), func(*TimeoutScope) error { return run(tk, op.body) })
				case 9:
					return fmt.Errorf("step fails %d", op.a)
				case 10:
					if op.a%4 == 0 {
						panic("a task panics")
					}
				case 11:
					tk.Uncancel()
				case 12:
					err = Sleep(tk, 0)
				}
				if err != nil && op.b&1 == 1 {
					return err // else: swallowed, go on
				}
			}
			return nil
		}
		mainTask := CreateTask(l, body(main))
		if err := l.RunUntilComplete(mainTask); err != nil && !errors.Is(err, ErrDeadlock) && !mainTask.Done() {
			t.Fatalf("RunUntilComplete: %v (main not done)", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if deferred != started {
			t.Fatalf("%d tasks started, %d ran their deferred calls", started, deferred)
		}
		if err := goleak.Find(opt); err != nil {
			t.Fatal(err)
		}
	})
}
