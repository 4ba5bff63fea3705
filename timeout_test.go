package asyncio

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TMO-1: the deadline is now+d when Timeout is called; Never is no deadline.
func TestTMO1_DeadlineComputedAtCall(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, 500*time.Millisecond)
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, time.Second, func(s *TimeoutScope) error {
			r.log("when=%v", s.When())
			return nil
		})
		err := Timeout(tk, Never, func(s *TimeoutScope) error {
			r.log("when=Never:%v", s.When() == Never)
			return Sleep(tk, time.Hour)
		})
		r.log("never: %v", err)
		err = TimeoutAt(tk, 2*time.Hour, func(s *TimeoutScope) error {
			return Sleep(tk, 2*time.Hour)
		})
		r.log("at: %s", timeoutTraits(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"500ms when=1.5s",
		"500ms when=Never:true",
		"1h0m0.5s never: <nil>",
		`2h0m0s at: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
	}, r)
}

// TMO-2: the repr in each state.
func TestTMO2_Repr(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var saved *TimeoutScope
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, 1234567*time.Microsecond, func(s *TimeoutScope) error {
			saved = s
			r.log("%v", s)
			return nil
		})
		r.log("%v", saved)
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, time.Second, func(s *TimeoutScope) error {
			saved = s
			r.log("%v", s)
			err := Sleep(tk, 2*time.Second)
			r.log("%v expired=%v", s, s.Expired())
			return err
		})
		r.log("%v expired=%v", saved, saved.Expired())
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, Never, func(s *TimeoutScope) error {
			r.log("%v", s)
			return nil
		})
		r.log("%v", &TimeoutScope{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s <Timeout [active] when=1.235>",
		"0s <Timeout [finished]>",
		"0s <Timeout [active] when=1.0>",
		"1s <Timeout [expiring]> expired=true",
		"1s <Timeout [expired]> expired=true",
		"1s <Timeout [active] when=None>",
		"1s <Timeout [created]>",
	}, r)
}

// TMO-3: a scope needs the running task; entering twice fails.
func TestTMO3_EnterErrors(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		other := CreateTask(tk, func(*T) (int, error) { return 0, nil })
		err := Timeout(other.T(), time.Second, func(*TimeoutScope) error {
			r.log("body ran")
			return nil
		})
		r.log("%s", describe(err))
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, time.Second, func(s *TimeoutScope) error {
			r.log("%s", describe(s.enter(tk)))
			return nil
		})
		_, err = other.Await(tk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`0s RuntimeError("Timeout should be used inside a task")`,
		`0s RuntimeError("Timeout has already been entered")`,
	}, r)
}

// TMO-4: on expiry the task is cancelled without a message.
func TestTMO4_CancelWithoutMessage(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := Timeout(tk, time.Second, func(*TimeoutScope) error {
			err := Sleep(tk, time.Hour)
			var ce *CancelledError
			errors.As(err, &ce)
			r.log("inside: %q cancelling=%d", ce.Msg, tk.Cancelling())
			return err
		})
		r.log("%s", timeoutTraits(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1s inside: "" cancelling=1`,
		`1s TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
	}, r)
}

// TMO-5: Reschedule while active moves the deadline; otherwise it fails.
func TestTMO5_Reschedule(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var saved *TimeoutScope
		err := Timeout(tk, time.Second, func(s *TimeoutScope) error {
			saved = s
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(tk, 500*time.Millisecond)
			r.log("reschedule: %v", s.Reschedule(3*time.Second))
			r.log("when=%v", s.When())
			if err := Sleep(tk, 2*time.Second); err != nil {
				return err
			}
			r.log("survived the old deadline")
			s.Reschedule(0) // in the past: fires in the next iteration
			err := Sleep(tk, time.Hour)
			r.log("inside: %s", describe(s.Reschedule(time.Hour)))
			return err
		})
		r.log("%s", timeoutTraits(err))
		r.log("%s", describe(saved.Reschedule(time.Hour)))
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		Timeout(tk, time.Second, func(s *TimeoutScope) error {
			saved = s
			r.log("to Never: %v", s.Reschedule(Never))
			return Sleep(tk, 2*time.Second)
		})
		r.log("%s", describe(saved.Reschedule(time.Hour)))
		r.log("%s", describe((&TimeoutScope{}).Reschedule(time.Hour)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"500ms reschedule: <nil>",
		"500ms when=3s",
		"2.5s survived the old deadline",
		`2.5s inside: RuntimeError("Cannot change state of expiring Timeout")`,
		`2.5s TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
		`2.5s RuntimeError("Cannot change state of expired Timeout")`,
		"2.5s to Never: <nil>",
		`4.5s RuntimeError("Cannot change state of finished Timeout")`,
		`4.5s RuntimeError("Timeout has not been entered")`,
	}, r)
}

// TMO-6: only the scope's own cancellation is converted; the scope never
// suppresses, and a panic unwinding through it still uncancels.
func TestTMO6_ExitConversion(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		func() {
			defer func() { r.log("recovered %v cancelling=%d", recover(), tk.Cancelling()) }()
			//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
			Timeout(tk, time.Second, func(*TimeoutScope) error {
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(tk, time.Hour)
				panic("oops")
			})
		}()
		r.log("sleep after panic: %v", Sleep(tk, time.Second))
		err := Timeout(tk, time.Hour, func(*TimeoutScope) error { return errBoom })
		r.log("foreign: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s recovered oops cancelling=0",
		"2s sleep after panic: <nil>",
		"2s foreign: boom",
	}, r)
}

// TMO-7: Go has no implicit exception context: when the scope fired but a
// different error escapes, that error is returned unchanged (identity kept)
// and the cancellation is still withdrawn.
func TestTMO7_ForeignErrorAfterExpiryUnchanged(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var saved *TimeoutScope
		err := Timeout(tk, time.Second, func(s *TimeoutScope) error {
			saved = s
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(tk, time.Hour)
			return errBoom
		})
		r.log("same=%v expired=%v cancelling=%d", err == errBoom, saved.Expired(), tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"1s same=true expired=true cancelling=0"}, r)
}

// TMO-8 a..j.
func TestTMO8_Scenarios(t *testing.T) {
	type scenario struct {
		name string
		main func(tk *T, r *eventLog) error
		want []string
	}
	scenarios := []scenario{
		{"a_expiry", func(tk *T, r *eventLog) error {
			var s0 *TimeoutScope
			err := Timeout(tk, time.Second, func(s *TimeoutScope) error { s0 = s; return Sleep(tk, time.Hour) })
			r.log("%s expired=%v cancelling=%d", timeoutTraits(err), s0.Expired(), tk.Cancelling())
			return nil
		}, []string{`1s TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false expired=true cancelling=0`}},
		{"b_zero_no_await", func(tk *T, r *eventLog) error {
			for _, d := range []time.Duration{0, -time.Second} {
				var s0 *TimeoutScope
				err := Timeout(tk, d, func(s *TimeoutScope) error { s0 = s; return nil })
				r.log("%v expired=%v %v", err, s0.Expired(), s0)
			}
			r.log("sleep: %v", Sleep(tk, 0))
			return nil
		}, []string{"0s <nil> expired=false <Timeout [finished]>", "0s <nil> expired=false <Timeout [finished]>", "0s sleep: <nil>"}},
		{"c_zero_sleep0", func(tk *T, r *eventLog) error {
			err := Timeout(tk, 0, func(*TimeoutScope) error { return Sleep(tk, 0) })
			r.log("%s", timeoutTraits(err))
			return nil
		}, []string{`0s TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`}},
		{"d_inner_first", func(tk *T, r *eventLog) error {
			var outer0 *TimeoutScope
			err := Timeout(tk, 2*time.Second, func(outer *TimeoutScope) error {
				outer0 = outer
				err := Timeout(tk, time.Second, func(*TimeoutScope) error { return Sleep(tk, time.Hour) })
				r.log("inner: %s", timeoutTraits(err))
				return nil
			})
			r.log("outer: %v expired=%v", err, outer0.Expired())
			return nil
		}, []string{
			`1s inner: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
			"1s outer: <nil> expired=false",
		}},
		{"e_outer_first", func(tk *T, r *eventLog) error {
			err := Timeout(tk, time.Second, func(*TimeoutScope) error {
				var inner0 *TimeoutScope
				err := Timeout(tk, 2*time.Second, func(s *TimeoutScope) error { inner0 = s; return Sleep(tk, time.Hour) })
				r.log("inner: %v expired=%v", err, inner0.Expired())
				return err
			})
			r.log("outer: %s", timeoutTraits(err))
			return nil
		}, []string{
			"1s inner: asyncio: cancelled expired=false",
			`1s outer: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
		}},
		{"f_same_deadline", func(tk *T, r *eventLog) error {
			var o, i *TimeoutScope
			err := Timeout(tk, time.Second, func(outer *TimeoutScope) error {
				o = outer
				err := Timeout(tk, time.Second, func(inner *TimeoutScope) error {
					i = inner
					err := Sleep(tk, time.Hour)
					r.log("count=%d", tk.Cancelling())
					return err
				})
				r.log("inner: %v", err)
				return err
			})
			r.log("outer: %s; expired %v %v", timeoutTraits(err), i.Expired(), o.Expired())
			return nil
		}, []string{
			"1s count=2",
			"1s inner: asyncio: cancelled",
			`1s outer: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false; expired true true`,
		}},
		{"g_external_same_iteration", func(tk *T, r *eventLog) error {
			w := CreateTask(tk, func(wt *T) (int, error) {
				err := Timeout(wt, time.Second, func(*TimeoutScope) error { return Sleep(wt, time.Hour) })
				r.log("w: %v cancelling=%d", err, wt.Cancelling())
				return 0, err
			})
			tk.Loop().CallAt(time.Second, func() { w.Cancel("ext") })
			_, err := w.Await(tk)
			r.log("main: %v", err)
			return nil
		}, []string{"1s w: asyncio: cancelled: ext cancelling=1", "1s main: asyncio: cancelled: ext"}},
		{"h_body_swallows", func(tk *T, r *eventLog) error {
			var s0 *TimeoutScope
			err := Timeout(tk, time.Second, func(s *TimeoutScope) error {
				s0 = s
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(tk, time.Hour)
				return nil
			})
			r.log("%v expired=%v cancelling=%d", err, s0.Expired(), tk.Cancelling())
			return nil
		}, []string{"1s <nil> expired=true cancelling=0"}},
		{"i_foreign_not_expired", func(tk *T, r *eventLog) error {
			var s0 *TimeoutScope
			err := Timeout(tk, time.Hour, func(s *TimeoutScope) error { s0 = s; return errBoom })
			r.log("%v expired=%v", err, s0.Expired())
			return nil
		}, []string{"0s boom expired=false"}},
		{"j_inside_except_cancelled", func(tk *T, r *eventLog) error {
			tk.Cancel()
			err := Sleep(tk, 0)
			r.log("caught %v count=%d", err, tk.Cancelling())
			err = Timeout(tk, time.Second, func(*TimeoutScope) error { return Sleep(tk, time.Hour) })
			r.log("%s count=%d", timeoutTraits(err), tk.Cancelling())
			tk.Uncancel()
			return nil
		}, []string{
			"0s caught asyncio: cancelled count=1",
			`1s TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false count=1`,
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r, err := runMain(t, sc.main)
			if err != nil {
				t.Fatal(err)
			}
			checkEvents(t, sc.want, r)
		})
	}
}

// WAITFOR-1: Never is a plain await; d <= 0 cancels what is not done.
func TestWAITFOR1_NonPositiveTimeout(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		done := NewFuture[int](tk)
		done.SetResult(7)
		v, err := WaitFor[int](tk, 0, done)
		r.log("done: %v %v", v, err)

		pending := NewFuture[int](tk)
		_, err = WaitFor[int](tk, -time.Second, pending)
		r.log("pending: %s; cancelled=%v", timeoutTraits(err), pending.Cancelled())

		ran := false
		_, err = WaitForFunc(tk, 0, func(*T) (int, error) { ran = true; return 1, nil })
		r.log("func: %s; ran=%v", timeoutTraits(err), ran)

		stubborn := CreateTask(tk, func(ctk *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, time.Hour)
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, time.Second)
			return 42, nil
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(tk, 0)
		v, err = WaitFor[int](tk, 0, stubborn)
		r.log("swallowed: %v %v", v, err)

		later := NewFuture[int](tk)
		tk.Loop().CallLater(time.Hour, func() { later.SetResult(5) })
		v, err = WaitFor[int](tk, Never, later)
		r.log("never: %v %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s done: 7 <nil>",
		`0s pending: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false; cancelled=true`,
		`0s func: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false; ran=false`,
		"1s swallowed: 42 <nil>",
		"1h0m1s never: 5 <nil>",
	}, r)
}

// WAITFOR-2: a function runs inside the caller's task.
func TestWAITFOR2_RunsInCallersTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v, err := WaitForFunc(tk, time.Second, func(ft *T) (string, error) {
			return CurrentTask(ft.Loop()).Name(), Sleep(ft, 0)
		})
		r.log("%s %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s main <nil>"}, r)
}

// WAITFOR-3: on expiry the inner awaitable is cancelled and awaited first.
func TestWAITFOR3_InnerCancelledAndAwaited(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		slow := CreateTask(tk, func(ctk *T) (int, error) {
			err := Sleep(ctk, time.Hour)
			r.log("inner: %v", err)
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, time.Second) // cleanup outlasts the timeout
			return 0, err
		})
		_, err := WaitFor[int](tk, time.Second, slow)
		r.log("task: %s", timeoutTraits(err))

		swallow := CreateTask(tk, func(ctk *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, time.Hour)
			return 9, nil
		})
		v, err := WaitFor[int](tk, time.Second, swallow)
		r.log("swallow: %v %v", v, err)

		_, err = WaitForFunc(tk, time.Second, func(ft *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ft, time.Hour)
			return 0, errKey
		})
		r.log("other error: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s inner: asyncio: cancelled",
		`2s task: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
		"3s swallow: 9 <nil>",
		"4s other error: key",
	}, r)
}

// WAITFOR-4: cancelling the waiter cancels the inner awaitable.
func TestWAITFOR4_CancelWaiter(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := CreateTask(tk, sleeper(r, "inner", time.Hour, 0))
		w := CreateTask(tk, func(wt *T) (int, error) { return WaitFor[int](wt, 10*time.Second, inner) })
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, time.Second)
		w.Cancel("stop")
		_, err := w.Await(tk)
		r.log("w: %v; inner cancelled=%v", err, inner.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s inner start",
		"1s inner: asyncio: cancelled: stop",
		"1s w: asyncio: cancelled: stop; inner cancelled=true",
	}, r)
}

// WAITFOR-5 (3.12+): inner completes in the iteration the waiter is
// cancelled: the cancellation wins and the value is lost.
func TestWAITFOR5_RaceCancellationWins(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		fut := NewFuture[int](tk)
		w := CreateTask(tk, func(wt *T) (int, error) { return WaitFor[int](wt, 10*time.Second, fut) })
		var wp *Task[int] = w
		tk.Loop().CallAt(time.Second, func() {
			fut.SetResult(1)
			wp.Cancel()
		})
		v, err := w.Await(tk)
		r.log("w: %v %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"1s w: 0 asyncio: cancelled"}, r)
}

// WAITFOR-6: wait_for(shield(t)) timing out leaves t running.
func TestWAITFOR6_ShieldedInnerSurvives(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := CreateTask(tk, sleeper(r, "inner", 2*time.Second, 5))
		_, err := WaitFor(tk, time.Second, Shield[int](inner))
		r.log("wait_for: %s", timeoutTraits(err))
		v, err := inner.Await(tk)
		r.log("inner: %v %v", v, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s inner start",
		`1s wait_for: TimeoutError(cause=CancelledError("")) is(ErrTimeout)=true is(DeadlineExceeded)=true cancelled=false`,
		"2s inner done",
		"2s inner: 5 <nil>",
	}, r)
}

// The repr's when is round(when, 3) of the float loop time: values just
// below a half round down (1.0005 is stored as 1.000499...), as CPython
// 3.13 prints them.
func TestTMO2_ReprRoundsAsPython(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		for _, c := range []struct {
			d    time.Duration
			want string
		}{
			{1000500 * time.Microsecond, "when=1.0>"},
			{2001500 * time.Microsecond, "when=2.002>"},
			{12345500 * time.Microsecond, "when=12.345>"},
			{1234500 * time.Microsecond, "when=1.234>"},
			{1234567 * time.Microsecond, "when=1.235>"},
		} {
			//asynciovet:ignore droppedcancel the body returns nil at once: only the repr is checked
			Timeout(tk, c.d, func(s *TimeoutScope) error {
				if got := s.String(); !strings.HasSuffix(got, c.want) {
					t.Errorf("%v: %s, want ...%s", c.d, got, c.want)
				}
				return nil
			})
		}
		return nil
	})
}
