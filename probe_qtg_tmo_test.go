//asynciovet:file-ignore droppedcancel the probes drop errors their event logs already check (a panic unwinding a TaskGroup, a scope kept only for its state)

package asyncio

// Probes of timeout() / wait_for edges against CPython 3.13 (expectations
// are the output of the equivalent Python programs, run on a virtual clock).

import (
	"errors"
	"testing"
	"time"
)

// Reschedule in every state, and a second entry of a finished scope.
func TestProbeTMO_RescheduleStates(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var s *TimeoutScope
		err := Timeout(tk, time.Second, func(sc *TimeoutScope) error {
			s = sc
			err := Sleep(tk, 5*time.Second)
			r.log("body: %s %v %v %d", describe(err), sc.Expired(), sc, tk.Cancelling())
			r.log("expiring: %s", describe(sc.Reschedule(tk.Loop().Time()+10*time.Second)))
			return err
		})
		r.log("exit: %s %v %d", describe(err), s, tk.Cancelling())
		r.log("expired: %s", describe(s.Reschedule(Never)))
		Timeout(tk, Never, func(sc *TimeoutScope) error { s = sc; return nil })
		r.log("finished: %s %v", describe(s.Reschedule(Never)), s)
		r.log("reenter: %s", describe(s.enter(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s body: CancelledError("") true <Timeout [expiring]> 1`,
		`1s expiring: RuntimeError("Cannot change state of expiring Timeout")`,
		`1s exit: TimeoutError(cause=CancelledError("")) <Timeout [expired]> 0`,
		`1s expired: RuntimeError("Cannot change state of expired Timeout")`,
		`1s finished: RuntimeError("Cannot change state of finished Timeout") <Timeout [finished]>`,
		`1s reenter: RuntimeError("Timeout has already been entered")`,
	}, r)
}

// The deadline and an outside cancel in the same iteration: the outside
// CancelledError escapes, Expired is true, one request is left.
func TestProbeTMO_ExpiryAndOutsideCancelTogether(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := CreateTask(tk, func(wt *T) (int, error) {
			var s *TimeoutScope
			err := Timeout(wt, time.Second, func(sc *TimeoutScope) error {
				s = sc
				return Sleep(wt, 5*time.Second)
			})
			r.log("w: %s %v %d", describe(err), s.Expired(), wt.Cancelling())
			r.log("uncancelled %d", wt.Uncancel())
			if err := Sleep(wt, 0); err != nil {
				return 0, err
			}
			r.log("w next ok")
			return 0, nil
		})
		tk.Loop().CallAt(tk.Loop().Time()+time.Second, func() { w.Cancel("ext") })
		_, err := w.Await(tk)
		r.log("t: %s %v %d", describe(err), w.Cancelled(), w.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s w: CancelledError("ext") true 1`,
		"1s uncancelled 0",
		"1s w next ok",
		"1s t: <nil> false 0",
	}, r)
}

// A body that swallows the scope's cancellation and goes on awaiting: the
// request stays counted until exit, which returns nil.
func TestProbeTMO_SwallowThenContinue(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var s *TimeoutScope
		err := Timeout(tk, time.Second, func(sc *TimeoutScope) error {
			s = sc
			if err := Sleep(tk, 5*time.Second); err != nil {
				r.log("swallowed %d %v", tk.Cancelling(), sc.Expired())
			}
			if err := Sleep(tk, time.Second); err != nil {
				return err
			}
			r.log("slept more %d", tk.Cancelling())
			return nil
		})
		r.log("exit %s %d %v %v", describe(err), tk.Cancelling(), s.Expired(), s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s swallowed 1 true",
		"2s slept more 1",
		"2s exit <nil> 0 true <Timeout [expired]>",
	}, r)
}

// Nested scopes with the same deadline: the inner lets the CancelledError
// through, the outer converts it; both report expired.
func TestProbeTMO_NestedExpireTogether(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var outer, inner *TimeoutScope
		err := Timeout(tk, time.Second, func(o *TimeoutScope) error {
			outer = o
			err := Timeout(tk, time.Second, func(i *TimeoutScope) error {
				inner = i
				return Sleep(tk, 5*time.Second)
			})
			r.log("inner: %s %v %d", describe(err), inner.Expired(), tk.Cancelling())
			return err
		})
		r.log("outer: %s %v %d", describe(err), outer.Expired(), tk.Cancelling())

		// The inner, shorter one expires and is handled; the outer fires later.
		err = Timeout(tk, 2*time.Second, func(o *TimeoutScope) error {
			outer = o
			err := Timeout(tk, time.Second, func(i *TimeoutScope) error {
				inner = i
				return Sleep(tk, 5*time.Second)
			})
			if errors.Is(err, ErrTimeout) {
				r.log("inner timeout %v %d", inner.Expired(), tk.Cancelling())
			}
			return Sleep(tk, 5*time.Second)
		})
		r.log("outer: %s %v %d", describe(err), outer.Expired(), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s inner: CancelledError("") true 1`,
		`1s outer: TimeoutError(cause=CancelledError("")) true 0`,
		"2s inner timeout true 0",
		`3s outer: TimeoutError(cause=CancelledError("")) true 0`,
	}, r)
}

// Zero and negative delays fire at the body's first await; a body that
// never awaits finishes the scope unexpired. Rescheduling into the past
// and then forward again leaves only the last deadline.
func TestProbeTMO_ZeroNegativeAndRescheduleBack(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		for _, d := range []time.Duration{0, -time.Second} {
			var s *TimeoutScope
			err := Timeout(tk, d, func(sc *TimeoutScope) error {
				s = sc
				r.log("in body %v", sc.Expired())
				if err := Sleep(tk, 0); err != nil {
					return err
				}
				r.log("after sleep0 %v", sc.Expired())
				return nil
			})
			r.log("tmo %v %s %v %d", d, describe(err), s.Expired(), tk.Cancelling())
		}
		var s *TimeoutScope
		Timeout(tk, 0, func(sc *TimeoutScope) error { s = sc; r.log("no-await body"); return nil })
		r.log("no-await exit %v %v", s.Expired(), s)

		err := Timeout(tk, 5*time.Second, func(sc *TimeoutScope) error {
			s = sc
			sc.Reschedule(tk.Loop().Time() - time.Second)
			sc.Reschedule(tk.Loop().Time() + 2*time.Second)
			return Sleep(tk, 10*time.Second)
		})
		r.log("r: %s %v", describe(err), s.Expired())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s in body false",
		`0s tmo 0s TimeoutError(cause=CancelledError("")) true 0`,
		"0s in body false",
		`0s tmo -1s TimeoutError(cause=CancelledError("")) true 0`,
		"0s no-await body",
		"0s no-await exit false <Timeout [finished]>",
		`2s r: TimeoutError(cause=CancelledError("")) true`,
	}, r)
}

// A TaskGroup inside a timeout and a timeout inside a TaskGroup, the
// child's failure timer and the deadline due at the same time.
func TestProbeTMO_TaskGroupAndTimeoutSameDeadline(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		f := func(c *T) (int, error) {
			if err := Sleep(c, time.Second); err != nil {
				return 0, err
			}
			return 0, errO
		}
		var s *TimeoutScope
		err := Timeout(tk, time.Second, func(sc *TimeoutScope) error {
			s = sc
			return TaskGroup(tk, func(g *Group) error {
				Spawn(g, f)
				return Sleep(tk, 5*time.Second)
			})
		})
		r.log("tmo: %s %v %d", pyEG(err), s.Expired(), tk.Cancelling())
		r.log("after: %s", describe(Sleep(tk, 0)))

		err = TaskGroup(tk, func(g *Group) error {
			Spawn(g, f)
			err := Timeout(tk, time.Second, func(sc *TimeoutScope) error {
				s = sc
				return Sleep(tk, 5*time.Second)
			})
			r.log("tmo: %s %v %d", pyEG(err), s.Expired(), tk.Cancelling())
			return err
		})
		r.log("tg: %s %d", pyEG(err), tk.Cancelling())
		r.log("after: %s", describe(Sleep(tk, 0)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s tmo: TimeoutError(cause=CancelledError("")) true 0`,
		"1s after: <nil>",
		`2s tmo: TimeoutError(cause=CancelledError("")) true 0`,
		`2s tg: EG(TimeoutError(cause=CancelledError(""))) 0`,
		"2s after: <nil>",
	}, r)
}

// wait_for on a task that is already done: its outcome, for timeouts
// 0, positive and negative; a cancelled one gives its CancelledError.
func TestProbeWAITFOR_DoneTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		ok := CreateTask(tk, func(*T) (int, error) { return 7, nil })
		bad := CreateTask(tk, func(*T) (int, error) { return 0, errKey })
		canc := CreateTask(tk, func(c *T) (int, error) { return 0, Sleep(c, time.Hour) })
		//asynciovet:ignore droppedcancel the probe lets the tasks run
		Sleep(tk, 0)
		canc.Cancel()
		//asynciovet:ignore droppedcancel the probe lets the tasks run
		Sleep(tk, 0)
		for _, d := range []time.Duration{0, time.Second, -time.Second} {
			v, err := WaitFor(tk, d, ok)
			r.log("wf done %v: %d %s", d, v, describe(err))
		}
		for _, d := range []time.Duration{0, time.Second} {
			_, err := WaitFor(tk, d, bad)
			r.log("wf bad %v: %s", d, describe(err))
		}
		for _, d := range []time.Duration{0, time.Second} {
			_, err := WaitFor(tk, d, canc)
			r.log("wf cancelled %v: %s %d", d, describe(err), tk.Cancelling())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s wf done 0s: 7 <nil>",
		"0s wf done 1s: 7 <nil>",
		"0s wf done -1s: 7 <nil>",
		`0s wf bad 0s: *errors.errorString("key")`,
		`0s wf bad 1s: *errors.errorString("key")`,
		`0s wf cancelled 0s: CancelledError("") 0`,
		`0s wf cancelled 1s: CancelledError("") 0`,
	}, r)
}
