//asynciovet:file-ignore droppedcancel the probes drop errors their event logs already check (a panic unwinding a TaskGroup, a scope kept only for its state)

package asyncio

// Probes of TaskGroup edges against CPython 3.13 (each expectation is the
// output of the equivalent Python program, noted above each test).

import (
	"errors"
	"testing"
	"time"
)

var (
	errO    = errors.New("o")
	errI    = errors.New("i")
	errBody = errors.New("body")
)

// pyEG renders err as the Python probes print it: EG(members...) for an
// ExceptionGroup, else describe.
func pyEG(err error) string {
	var eg *ExceptionGroup
	if errors.As(err, &eg) && eg == err {
		s := "EG("
		for i, m := range eg.Errs {
			if i > 0 {
				s += ", "
			}
			s += pyEG(m)
		}
		return s + ")"
	}
	return describe(err)
}

// Inner and outer children fail in the same iteration, the outer's done
// callback first: both groups cancel the body's task (cancelling 2); the
// inner group re-arms the outstanding request, the outer group withdraws it.
func TestProbeTG_NestedFailSameIteration(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(outer *Group) error {
			Spawn(outer, failer(r, "o", time.Second, errO))
			err := TaskGroup(tk, func(inner *Group) error {
				Spawn(inner, failer(r, "i", time.Second, errI))
				err := Sleep(tk, 10*time.Second)
				r.log("inner body: %s %d", describe(err), tk.Cancelling())
				return err
			})
			r.log("inner: %s %d", pyEG(err), tk.Cancelling())
			return err
		})
		r.log("outer: %s %d", pyEG(err), tk.Cancelling())
		r.log("after: %s", describe(Sleep(tk, 0)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s o start", "0s i start",
		"1s o fails", "1s i fails",
		`1s inner body: CancelledError("") 2`,
		`1s inner: EG(*errors.errorString("i")) 1`,
		`1s outer: EG(*errors.errorString("o"), EG(*errors.errorString("i"))) 0`,
		"1s after: <nil>",
	}, r)
}

// The outer group's child fails while the body waits in an inner group:
// the inner group propagates the CancelledError, the outer one withdraws
// it and raises its child's error alone.
func TestProbeTG_NestedOuterChildFails(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(outer *Group) error {
			Spawn(outer, failer(r, "o", time.Second, errO))
			Spawn(outer, sleeper(r, "os", 5*time.Second, 0))
			err := TaskGroup(tk, func(inner *Group) error {
				Spawn(inner, sleeper(r, "is", 5*time.Second, 0))
				return Sleep(tk, 10*time.Second)
			})
			r.log("inner: %s %d", pyEG(err), tk.Cancelling())
			return err
		})
		r.log("outer: %s %d", pyEG(err), tk.Cancelling())
		r.log("after: %s", describe(Sleep(tk, 0)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s o start", "0s os start", "0s is start",
		"1s o fails",
		"1s os: asyncio: cancelled",
		"1s is: asyncio: cancelled",
		`1s inner: CancelledError("") 1`,
		`1s outer: EG(*errors.errorString("o")) 0`,
		"1s after: <nil>",
	}, r)
}

// An outside cancel while exit waits; a child turns its cancellation into
// an error: the group raises that error and re-arms the outside request,
// which the parent's next await raises.
func TestProbeTG_OutsideCancelChildConverts(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, func(c *T) (int, error) {
					if err := Sleep(c, 5*time.Second); err != nil {
						r.log("c converts")
						return 0, errKey
					}
					return 0, nil
				})
				Spawn(g, sleeper(r, "s", 5*time.Second, 0))
				return nil
			})
			r.log("tg: %s %d", pyEG(err), wt.Cancelling())
			err = Sleep(wt, 0)
			r.log("after: %s %d", describe(err), wt.Cancelling())
			return 0, err
		})
		//asynciovet:ignore droppedcancel the probe sleeps to let time pass
		Sleep(tk, time.Second)
		w.Cancel("ext")
		_, err := w.Await(tk)
		r.log("w: %s %v %d", describe(err), w.Cancelled(), w.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s s start",
		"1s c converts",
		"1s s: asyncio: cancelled",
		`1s tg: EG(*errors.errorString("key")) 1`,
		`1s after: CancelledError("") 1`,
		`1s w: CancelledError("") true 1`,
	}, r)
}

// Spawn while aborting, after a failed group and after a clean one: the
// messages carry the repr of that moment.
func TestProbeTG_SpawnMessages(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var saved *Group
		err := TaskGroup(tk, func(g *Group) error {
			saved = g
			Spawn(g, failer(r, "f", time.Second, errO))
			Spawn(g, sleeper(r, "s", 5*time.Second, 0))
			err := Sleep(tk, 10*time.Second)
			_, serr := Spawn(g, sleeper(r, "x", time.Second, 0))
			r.log("spawn aborting: %s", describe(serr))
			return err
		})
		r.log("tg: %s", pyEG(err))
		_, serr := Spawn(saved, sleeper(r, "y", time.Second, 0))
		r.log("spawn after: %s", describe(serr))
		err = TaskGroup(tk, func(g *Group) error {
			saved = g
			Spawn(g, sleeper(r, "z", time.Second, 0))
			return nil
		})
		_, serr = Spawn(saved, sleeper(r, "y", time.Second, 0))
		r.log("spawn after ok: %s %v", describe(serr), err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s f start", "0s s start",
		"1s f fails",
		"1s s: asyncio: cancelled",
		`1s spawn aborting: RuntimeError("TaskGroup <TaskGroup tasks=1 errors=1 cancelling> is shutting down")`,
		`1s tg: EG(*errors.errorString("o"))`,
		`1s spawn after: RuntimeError("TaskGroup <TaskGroup cancelling> is finished")`,
		"1s z start",
		"2s z done",
		`2s spawn after ok: RuntimeError("TaskGroup <TaskGroup entered> is finished") <nil>`,
	}, r)
}

// The body raises its own error after a child failed, and a sibling
// converts its cancellation: children's errors in done order, body last.
func TestProbeTG_BodyRaisesAfterChildFailed(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, failer(r, "f1", time.Second, errO))
			Spawn(g, func(c *T) (int, error) {
				if err := Sleep(c, 5*time.Second); err != nil {
					return 0, errKey
				}
				return 0, nil
			})
			if err := Sleep(tk, 10*time.Second); err != nil {
				return errBody
			}
			return nil
		})
		r.log("tg: %s %d", pyEG(err), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s f1 start",
		"1s f1 fails",
		`1s tg: EG(*errors.errorString("o"), *errors.errorString("key"), *errors.errorString("body")) 0`,
	}, r)
}

// Two outside cancels while exit waits for a child that takes 2 s to
// finish its cancellation: the first CancelledError propagates, both
// requests stay counted.
func TestProbeTG_TwoOutsideCancelsWhileExitWaits(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, func(c *T) (int, error) {
					err := Sleep(c, 5*time.Second)
					r.log("slow cancelled; 2s more")
					//asynciovet:ignore droppedcancel the probe's child finishes its cleanup
					Sleep(c, 2*time.Second)
					r.log("slow finishing")
					return 0, err
				})
				return nil
			})
			r.log("tg: %s %d", pyEG(err), wt.Cancelling())
			return 0, err
		})
		//asynciovet:ignore droppedcancel the probe sleeps to let time pass
		Sleep(tk, time.Second)
		w.Cancel("ext1")
		//asynciovet:ignore droppedcancel the probe sleeps to let time pass
		Sleep(tk, time.Second)
		w.Cancel("ext2")
		_, err := w.Await(tk)
		r.log("w: %s %v %d", describe(err), w.Cancelled(), w.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s slow cancelled; 2s more",
		"3s slow finishing",
		`3s tg: CancelledError("ext1") 2`,
		`3s w: CancelledError("ext1") true 2`,
	}, r)
}

// A panic in the body (asyncio's KeyboardInterrupt) after a child failed:
// the siblings are cancelled and awaited, the panic goes on, and the
// parent keeps the group's cancel request (3.13 raises the base error
// before uncancelling); no cancellation is left pending. A second panic,
// with a child failing while cancelled: the panic goes on. In both, the
// children's errors go to the exception handler, as CPython main does
// (gh-135736); 3.13.0 drops them silently.
func TestProbeTG_BodyPanicAfterChildFailed(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v := func() (v any) {
			defer func() { v = recover() }()
			TaskGroup(tk, func(g *Group) error {
				Spawn(g, failer(r, "f", time.Second, errO))
				Spawn(g, sleeper(r, "s", 5*time.Second, 0))
				if err := Sleep(tk, 10*time.Second); err != nil {
					panic("ki")
				}
				return nil
			})
			return nil
		}()
		r.log("ki %v %d", v, tk.Cancelling())
		r.log("after %s %d", describe(Sleep(tk, 0)), tk.Cancelling())
		v = func() (v any) {
			defer func() { v = recover() }()
			TaskGroup(tk, func(g *Group) error {
				Spawn(g, func(c *T) (int, error) {
					if err := Sleep(c, 5*time.Second); err != nil {
						return 0, errKey
					}
					return 0, nil
				})
				Sleep(tk, 0)
				panic("ki2")
			})
			return nil
		}()
		r.log("ki2 %v %d", v, tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s f start", "0s s start",
		"1s f fails",
		"1s s: asyncio: cancelled",
		"1s handler: TaskGroup task exception was not propagated because the TaskGroup body is being closed with a BaseException: o",
		"1s ki ki 1",
		"1s after <nil> 1",
		"1s handler: TaskGroup task exception was not propagated because the TaskGroup body is being closed with a BaseException: key",
		"1s ki2 ki2 1",
	}, r)
}

// A child started eagerly that cancels its group in its eager step, before
// Spawn has added it to the group, is cancelled too (CPython main,
// gh-155418: create_task cancels a not-done task of an aborting group).
// Before, the group waited for it to finish on its own (an hour here).
func TestProbeTG_EagerChildCancelsGroup(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, sleeper(r, "a", time.Hour, 0))
			Spawn(g, func(c *T) (int, error) {
				r.log("eager step")
				g.Cancel()
				err := Sleep(c, time.Hour)
				r.log("eager child: %s", describe(err))
				return 0, err
			}, WithEagerStart())
			r.log("body: %s", describe(Sleep(tk, time.Hour)))
			return nil
		})
		r.log("tg: %s %d", describe(err), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s eager step",
		`0s eager child: CancelledError("")`,
		`0s body: CancelledError("")`,
		"0s tg: <nil> 0",
	}, r)
}
