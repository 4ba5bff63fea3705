//asynciovet:file-ignore droppedcancel the probes drop errors their event logs already check (a panic unwinding a TaskGroup, a scope kept only for its state)

package asyncio

// Probes mixing TaskGroup, timeout and wait_for, against CPython 3.13
// (expectations are the output of the equivalent Python programs, run on a
// virtual clock).

import (
	"testing"
	"time"
)

// The body awaits a child that fails: the group's done callback runs
// before the body's wake-up and cancels the parent, so the body's await
// gives a CancelledError, not the child's error.
func TestProbeTG_BodyAwaitsFailingChild(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			c, _ := Spawn(g, func(c *T) (int, error) {
				if err := Sleep(c, time.Second); err != nil {
					return 0, err
				}
				return 0, errO
			})
			_, err := c.Await(tk)
			r.log("body await: %s %d", describe(err), tk.Cancelling())
			return err
		})
		r.log("tg: %s %d", pyEG(err), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s body await: CancelledError("") 1`,
		`1s tg: EG(*errors.errorString("o")) 0`,
	}, r)
}

// wait_for on a task that swallows the cancellation and returns a value:
// the value, for a positive and a zero timeout.
func TestProbeWAITFOR_SwallowingTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		sw := func(c *T) (int, error) {
			if err := Sleep(c, 5*time.Second); err != nil {
				r.log("sw swallowed")
				return 5, nil
			}
			return 0, nil
		}
		for _, d := range []time.Duration{time.Second, 0} {
			task := CreateTask(tk, sw)
			//asynciovet:ignore droppedcancel the probe lets the task start
			Sleep(tk, 0)
			v, err := WaitFor(tk, d, task)
			r.log("wf %v -> %d %s %d", d, v, describe(err), tk.Cancelling())
		}
		ran := false
		for _, d := range []time.Duration{0, -time.Second} {
			_, err := WaitForFunc(tk, d, func(*T) (int, error) { ran = true; return 1, nil })
			r.log("wfc %v: %s ran=%v", d, describe(err), ran)
		}
		// The coroutine swallows the timeout's cancellation and returns later.
		v, err := WaitForFunc(tk, time.Second, func(c *T) (int, error) {
			if err := Sleep(c, 5*time.Second); err != nil {
				r.log("c swallowed %d", c.Cancelling())
			}
			if err := Sleep(c, time.Second); err != nil {
				return 0, err
			}
			return 3, nil
		})
		r.log("wf -> %d %s %d", v, describe(err), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s sw swallowed",
		"1s wf 1s -> 5 <nil> 0",
		"1s sw swallowed",
		"1s wf 0s -> 5 <nil> 0",
		`1s wfc 0s: TimeoutError(cause=CancelledError("")) ran=false`,
		`1s wfc -1s: TimeoutError(cause=CancelledError("")) ran=false`,
		"2s c swallowed 1",
		"3s wf -> 3 <nil> 0",
	}, r)
}

// The body fails with an outside cancel pending: the group's wait swallows
// it while aborting, raises the body's error and re-arms the cancel.
func TestProbeTG_BodyErrorWithPendingOutsideCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, sleeper(r, "s", 5*time.Second, 0))
				//asynciovet:ignore droppedcancel the probe lets the child start
				Sleep(wt, 0)
				wt.Cancel("ext")
				return errKey
			})
			r.log("tg: %s %d", pyEG(err), wt.Cancelling())
			err = Sleep(wt, 0)
			r.log("after: %s %d", describe(err), wt.Cancelling())
			return 0, err
		})
		_, err := w.Await(tk)
		r.log("w: %s %v", describe(err), w.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s s start",
		"0s s: asyncio: cancelled",
		`0s tg: EG(*errors.errorString("key")) 1`,
		`0s after: CancelledError("") 1`,
		`0s w: CancelledError("") true`,
	}, r)
}

// A child fails and cancels the parent from outside in the same step,
// while exit waits: the group raises the child's error and keeps the
// outside request armed.
func TestProbeTG_ChildFailsAndCancelsParentFromOutside(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var w *Task[int]
		w = CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, func(c *T) (int, error) {
					if err := Sleep(c, time.Second); err != nil {
						return 0, err
					}
					w.Cancel("ext")
					return 0, errO
				})
				Spawn(g, func(c *T) (int, error) { return 0, Sleep(c, 5*time.Second) })
				return nil
			})
			r.log("tg: %s %d", pyEG(err), wt.Cancelling())
			err = Sleep(wt, 0)
			r.log("after: %s %d", describe(err), wt.Cancelling())
			return 0, err
		})
		_, err := w.Await(tk)
		r.log("w: %s %v %d", describe(err), w.Cancelled(), w.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s tg: EG(*errors.errorString("o")) 1`,
		`1s after: CancelledError("") 1`,
		`1s w: CancelledError("") true 1`,
	}, r)
}

// A TaskGroup in a timeout: the child's failure step runs in the same
// iteration as the deadline, before the body wakes. The group raises the
// child's error (the body's CancelledError is not propagated), and the
// timeout lets it through with the request withdrawn.
func TestProbeTMO_ChildFailsInDeadlineIteration(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		l := tk.Loop()
		ev := NewEvent()
		l.CallAt(l.Time()+time.Second, ev.Set)
		var s *TimeoutScope
		err := Timeout(tk, time.Second, func(sc *TimeoutScope) error {
			s = sc
			return TaskGroup(tk, func(g *Group) error {
				Spawn(g, func(c *T) (int, error) {
					if err := ev.Wait(c); err != nil {
						return 0, err
					}
					return 0, errO
				})
				return Sleep(tk, 5*time.Second)
			})
		})
		r.log("tmo: %s %v %d", pyEG(err), s.Expired(), tk.Cancelling())
		r.log("after: %s", describe(Sleep(tk, 0)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s tmo: EG(*errors.errorString("o")) true 0`,
		"1s after: <nil>",
	}, r)
}

// wait_for(coro, 0) on an eager loop: the coroutine's task starts eagerly,
// so a coroutine that finishes without suspending gives its result and one
// that suspends is cancelled (CPython 3.13 with eager_task_factory).
func TestProbeWAITFOR_ZeroTimeoutOnEagerLoop(t *testing.T) {
	l := NewLoop(WithVirtualTime(), WithEagerTasks())
	r := &eventLog{clock: l}
	task := CreateTask(l, func(tk *T) (int, error) {
		v, err := WaitForFunc(tk, 0, func(*T) (int, error) { r.log("c ran"); return 1, nil })
		r.log("wf c %d %s", v, describe(err))
		v, err = WaitForFunc(tk, 0, func(c *T) (int, error) {
			r.log("c2 ran")
			if err := Sleep(c, time.Second); err != nil {
				return 0, err
			}
			return 2, nil
		})
		r.log("wf c2 %d %s", v, describe(err))
		return 0, nil
	})
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	checkEvents(t, []string{
		"0s c ran",
		"0s wf c 1 <nil>",
		"0s c2 ran",
		`0s wf c2 0 TimeoutError(cause=CancelledError(""))`,
	}, r)
}

// A child puts two items, waking a waiting task and the body's Get, and
// fails in the same step: the wake-ups run before the group's done
// callback, so the body gets its item and the failure reaches the group
// while exit waits.
func TestProbeTG_BodyGetWokenByFailingChild(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[string](0)
		o := startTask(tk, "other", func(x *T) error {
			v, err := q.Get(x)
			r.log("other got %s %d", v, q.Len())
			return err
		})
		err := TaskGroup(tk, func(g *Group) error {
			Sleep(tk, 0)
			Spawn(g, func(c *T) (int, error) {
				if err := Sleep(c, time.Second); err != nil {
					return 0, err
				}
				_ = q.PutNowait("x")
				_ = q.PutNowait("y")
				return 0, errO
			})
			v, err := q.Get(tk)
			if err != nil {
				return err
			}
			r.log("body got %s", v)
			return nil
		})
		r.log("tg %s %d %d %d", pyEG(err), tk.Cancelling(), q.Len(), q.getters.len())
		Sleep(tk, 0)
		r.log("end %d %d %v", q.Len(), q.unfinished, o.Done())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s other got x 1",
		"1s body got y",
		`1s tg EG(*errors.errorString("o")) 0 0 0`,
		"1s end 0 2 true",
	}, r)
}

// One child fails and another puts an item for the body's Get in the same
// iteration, the failure first: the body's woken Get is cancelled by the
// group and hands the item to the next getter.
func TestProbeTG_BodyGetCancelledAfterWake(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		q := NewQueue[string](0)
		var o *Task[struct{}]
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, failer(r, "f", time.Second, errO))
			Spawn(g, func(c *T) (int, error) {
				if err := Sleep(c, time.Second); err != nil {
					return 0, err
				}
				return 0, q.PutNowait("x")
			})
			o = startTask(tk, "other", func(x *T) error {
				Sleep(x, 0)
				v, err := q.Get(x)
				r.log("other got %s %d", v, q.Len())
				return err
			})
			v, err := q.Get(tk)
			if err != nil {
				r.log("body get %s %d", describe(err), q.Len())
				return err
			}
			r.log("body got %s", v)
			return nil
		})
		r.log("tg %s %d %d %d", pyEG(err), tk.Cancelling(), q.Len(), q.getters.len())
		Sleep(tk, 0)
		r.log("end %d %d %v", q.Len(), q.unfinished, o.Done())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s f start",
		"1s f fails",
		`1s body get CancelledError("") 1`,
		"1s other got x 0",
		`1s tg EG(*errors.errorString("o")) 0 0 0`,
		"1s end 0 1 true",
	}, r)
}
