package asyncio

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// At most limit children run; the rest start in FIFO order as slots free.
func TestBoundedTaskGroup_LimitAndFIFO(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		return BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			durations := []time.Duration{30, 10, 10, 10, 5}
			for i, d := range durations {
				if _, err := SpawnBoundedErr(g, func(tk *T) error {
					r.log("c%d start running=%d", i, g.Running())
					return Sleep(tk, d*ms)
				}); err != nil {
					return err
				}
			}
			r.log("spawned %v", g)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s spawned <BoundedTaskGroup limit=2 running=0 tasks=5 entered>",
		"0s c0 start running=1",
		"0s c1 start running=2",
		"10ms c2 start running=2",
		"20ms c3 start running=2",
		"30ms c4 start running=1",
	}, r)
}

// A child cancelled while queued never runs its function and frees no
// slot it never had; the others go on.
func TestBoundedTaskGroup_CancelQueuedNeverStarts(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		return BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			var tasks []*Task[struct{}]
			for i := range 3 {
				task, err := SpawnBoundedErr(g, func(tk *T) error {
					r.log("c%d start", i)
					return Sleep(tk, 10*ms)
				})
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			if err := Sleep(tk, 5*ms); err != nil {
				return err
			}
			tasks[1].Cancel()
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			r.log("c1 cancelled=%v started=%d", tasks[1].Cancelled(), g.Started())
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s c0 start", "5ms c1 cancelled=true started=1", "10ms c2 start"}, r)
}

// The first failure cancels running and queued children and the body;
// queued ones never start; the result is TaskGroup's ExceptionGroup.
func TestBoundedTaskGroup_FailureSemantics(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			for i := range 5 {
				if _, err := SpawnBoundedErr(g, func(tk *T) error {
					r.log("c%d start", i)
					if err := Sleep(tk, time.Duration(i+1)*10*ms); err != nil {
						r.log("c%d: %v", i, err)
						return err
					}
					if i == 0 {
						return boom
					}
					return nil
				}); err != nil {
					return err
				}
			}
			err := Sleep(tk, time.Hour)
			r.log("body: %v", err)
			return err
		})
		r.log("group: %v is(boom)=%v", err, errors.Is(err, boom))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c0 start", "0s c1 start",
		"10ms c1: asyncio: cancelled", "10ms body: asyncio: cancelled",
		"10ms group: unhandled errors in a TaskGroup (1 sub-exception) is(boom)=true",
	}, r)
}

// Outside cancellation: everything is cancelled and awaited, the
// CancelledError comes back.
func TestBoundedTaskGroup_OutsideCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := startTask(tk, "inner", func(tk *T) error {
			err := BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
				for i := range 3 {
					if _, err := SpawnBoundedErr(g, func(tk *T) error {
						r.log("c%d start", i)
						return Sleep(tk, time.Hour)
					}); err != nil {
						return err
					}
				}
				return nil
			})
			r.log("inner: %v", err)
			return err
		})
		if err := Sleep(tk, ms); err != nil {
			return err
		}
		inner.Cancel()
		awaitAll(tk, inner)
		r.log("cancelled=%v", inner.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s c0 start", "1ms inner: asyncio: cancelled", "1ms cancelled=true"}, r)
}

// Bad input.
func TestBoundedTaskGroup_BadInput(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		ran := false
		for _, f := range []func(){
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			func() { BoundedTaskGroup(tk, 0, func(*BoundedGroup) error { ran = true; return nil }) },
			//asynciovet:ignore droppedcancel the call panics on its bad argument before it can suspend; the panic is what the test checks
			func() { GatherBounded[int](tk, -1) },
			func() { AsCompletedBounded[int](tk, 0) },
		} {
			v := mustPanic(t, "limit", f)
			var ve *ValueError
			if err, _ := v.(error); !errors.As(err, &ve) || !containsWord(ve.Msg, "limit") {
				t.Errorf("panic %v, want a *ValueError naming the limit", v)
			}
		}
		if ran {
			t.Error("body ran")
		}
		return nil
	})
}

// GatherBounded: results in argument order, at most limit in flight.
func TestGatherBounded_OrderAndLimit(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inFlight, peak := 0, 0
		var fns []func(*T) (int, error)
		for i := range 6 {
			fns = append(fns, func(tk *T) (int, error) {
				inFlight++
				peak = max(peak, inFlight)
				defer func() { inFlight-- }()
				if err := Sleep(tk, time.Duration(6-i)*ms); err != nil {
					return 0, err
				}
				return i * i, nil
			})
		}
		res, err := GatherBounded(tk, 3, fns...)
		r.log("%v %v peak=%d", res, err, peak)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"7ms [0 1 4 9 16 25] <nil> peak=3"}, r)
}

// GatherBounded: the first failure is returned as it is, the rest are
// cancelled (queued never start) and awaited first.
func TestGatherBounded_FirstFailure(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		started := 0
		fn := func(d time.Duration, fail bool) func(*T) (int, error) {
			return func(tk *T) (int, error) {
				started++
				if err := Sleep(tk, d); err != nil {
					return 0, err
				}
				if fail {
					return 0, boom
				}
				return 1, nil
			}
		}
		res, err := GatherBounded(tk, 2, fn(5*ms, true), fn(50*ms, false), fn(ms, false), fn(ms, false))
		r.log("%v %v started=%d", res, err, started)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"5ms [] boom started=2"}, r)
}

// GatherBoundedOutcomes: every child runs, errors in place.
func TestGatherBoundedOutcomes(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		out, err := GatherBoundedOutcomes(tk, 1,
			func(tk *T) (int, error) { return 1, Sleep(tk, ms) },
			func(tk *T) (int, error) { return 0, boom },
			func(tk *T) (int, error) { return 3, Sleep(tk, ms) },
		)
		r.log("%v %v", out, err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"2ms [{1 <nil>} {0 boom} {3 <nil>}] <nil>"}, r)
}

// AsCompletedBounded: completion order, at most limit in flight, errors
// yielded; breaking out cancels and awaits the rest.
func TestAsCompletedBounded(t *testing.T) {
	boom := errors.New("boom")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		mk := func(d time.Duration, err error) func(*T) (string, error) {
			return func(tk *T) (string, error) {
				if e := Sleep(tk, d*ms); e != nil {
					r.log("cancelled after %d", int(d))
					return "", e
				}
				return fmt.Sprint(int(d)), err
			}
		}
		for i, o := range AsCompletedBounded(tk, 2, mk(30, nil), mk(10, boom), mk(5, nil), mk(100, nil), mk(1, nil)) {
			r.log("#%d %q %v", i, o.Value, o.Err)
			if i == 0 {
				break
			}
		}
		r.log("after loop, tasks=%d", len(AllTasks(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`10ms #1 "10" boom`,
		`15ms #2 "5" <nil>`,
		`30ms #0 "30" <nil>`,
		"30ms cancelled after 100",
		"30ms cancelled after 1", // its slot freed at 30ms, before the break
		"30ms after loop, tasks=1",
	}, r)
}

// AsCompletedBounded: t cancelled while waiting yields (-1, the
// CancelledError) after the children were cancelled and awaited.
func TestAsCompletedBounded_Cancelled(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		inner := startTask(tk, "inner", func(tk *T) error {
			for i, o := range AsCompletedBounded(tk, 1,
				func(tk *T) (int, error) { return 1, Sleep(tk, ms) },
				func(tk *T) (int, error) { return 2, Sleep(tk, time.Hour) },
			) {
				r.log("#%d %v %v", i, o.Value, o.Err)
				if o.Err != nil {
					return o.Err
				}
			}
			return nil
		})
		if err := Sleep(tk, 5*ms); err != nil {
			return err
		}
		inner.Cancel()
		awaitAll(tk, inner)
		r.log("cancelled=%v tasks=%d", inner.Cancelled(), len(AllTasks(tk)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"1ms #0 1 <nil>", "5ms #-1 0 asyncio: cancelled", "5ms cancelled=true tasks=1"}, r)
}

// AsCompletedBounded: t cancelled with a message while the children stop
// after a break (their cleanup takes time): the cancellation re-armed for
// t's next await keeps its message (it was dropped).
func TestAsCompletedBounded_CancelledAfterBreakKeepsTheMessage(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		slowStop := func(d time.Duration) func(*T) (int, error) {
			return func(tk *T) (int, error) {
				err := Sleep(tk, d)
				if err != nil { // a cleanup that takes time
					cleanup := CreateTask(tk, func(tk *T) (struct{}, error) { return struct{}{}, Sleep(tk, 50*ms) })
					//asynciovet:ignore droppedcancel the cleanup's outcome does not matter: the child returns its cancellation below
					_, _ = Shield[struct{}](cleanup).Await(tk)
					//asynciovet:ignore droppedcancel as above
					_, _ = cleanup.Await(tk)
				}
				return 0, err
			}
		}
		inner := startTask(tk, "inner", func(tk *T) error {
			for range AsCompletedBounded(tk, 2, slowStop(10*ms), slowStop(time.Second)) {
				break
			}
			return Sleep(tk, ms)
		})
		if err := Sleep(tk, 20*ms); err != nil {
			return err
		}
		inner.Cancel("shutdown requested")
		_, err := inner.Await(tk) // the first retrieval carries the message (FUT-8)
		r.log("%s", describe(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`60ms CancelledError("shutdown requested")`}, r)
}

// AsCompletedBounded's break and t's cancellation: a request pending (not
// delivered) at the break reaches t's next await after the loop; one the
// body saw and broke on is not delivered again.
func TestAsCompletedBounded_BreakDeliversEachCancellationOnce(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		fns := []func(*T) (int, error){
			func(tk *T) (int, error) { return 1, Sleep(tk, ms) },
			func(tk *T) (int, error) { return 2, Sleep(tk, time.Hour) },
		}
		var pendingAtBreak *Task[struct{}]
		pendingAtBreak = startTask(tk, "pending", func(tk *T) error {
			for range AsCompletedBounded(tk, 2, fns...) {
				pendingAtBreak.Cancel("at the break") // not delivered yet
				break
			}
			r.log("pending: after the loop %s", describe(Sleep(tk, ms)))
			return nil
		})
		seen := startTask(tk, "seen", func(tk *T) error {
			for range AsCompletedBounded(tk, 2, fns...) {
				if err := Sleep(tk, time.Hour); err != nil {
					r.log("seen: the body got %s", describe(err))
					break
				}
			}
			r.log("seen: after the loop %s", describe(Sleep(tk, ms)))
			return nil
		})
		if err := Sleep(tk, 5*ms); err != nil {
			return err
		}
		seen.Cancel("outer")
		_, err1 := pendingAtBreak.Await(tk)
		_, err2 := seen.Await(tk)
		return errors.Join(err1, err2)
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`1ms pending: after the loop CancelledError("at the break")`,
		`5ms seen: the body got CancelledError("outer")`,
		`6ms seen: after the loop <nil>`,
	}, r)
}

// A queued child cancelled on its own (found by cancelcheck): GatherBounded
// fails with the *CancelledError and stops the others; GatherBoundedOutcomes
// puts the CancelledError in place; AsCompletedBounded yields it.
func TestGatherBounded_QueuedChildCancelledOnItsOwn(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		ran := 0
		fns := []func(*T) (int, error){
			func(tk *T) (int, error) { ran++; return 1, Sleep(tk, 10*ms) },
			func(tk *T) (int, error) { ran++; return 2, nil },
		}
		cancelLast := func() {
			all := AllTasks(tk)
			all[len(all)-1].Cancel() // the queued child, created last
		}
		tk.Loop().CallLater(ms, cancelLast)
		_, err := GatherBounded(tk, 1, fns...)
		r.log("gather: %v ran=%d", describe(err), ran)
		tk.Loop().CallLater(ms, cancelLast)
		out, err := GatherBoundedOutcomes(tk, 1, fns...)
		r.log("outcomes: %v %v %v ran=%d", out[0], describe(out[1].Err), err, ran)
		tk.Loop().CallLater(ms, cancelLast)
		for i, o := range AsCompletedBounded(tk, 1, fns...) {
			r.log("as_completed: #%d %v %v", i, o.Value, describe(o.Err))
		}
		r.log("ran=%d", ran)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1ms gather: " + describe(&CancelledError{}) + " ran=1",
		"11ms outcomes: {1 <nil>} " + describe(&CancelledError{}) + " <nil> ran=2",
		"12ms as_completed: #1 0 " + describe(&CancelledError{}),
		"21ms as_completed: #0 1 " + describe(nil),
		"21ms ran=3",
	}, r)
}

// Every hedged attempt cancelled on its own: the result is the
// *CancelledError, not an empty ExceptionGroup.
func TestHedge_AttemptsCancelledOnTheirOwn(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		cancelAttempts := func() {
			for _, x := range AllTasks(tk) {
				if x != tk {
					x.Cancel()
				}
			}
		}
		tk.Loop().CallLater(ms, cancelAttempts)
		tk.Loop().CallLater(2*ms, cancelAttempts)
		_, err := Hedge(tk, HedgePolicy{Delay: time.Hour}, func(tk *T, i int) (int, error) {
			r.log("attempt %d", i)
			return 0, Sleep(tk, time.Hour)
		})
		r.log("%v", describe(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s attempt 0", "1ms attempt 1", "2ms " + describe(&CancelledError{})}, r)
}

// A queued child cancelled and uncancelled before it ever ran (so its
// first step is scheduled by the cancellation but has nothing to deliver)
// still waits for a slot: the limit holds.
func TestBoundedTaskGroup_QueuedCancelWithdrawn(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		return BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			var tasks []*Task[struct{}]
			for i := range 3 {
				task, err := SpawnBoundedErr(g, func(tk *T) error {
					r.log("c%d start running=%d", i, g.Running())
					return Sleep(tk, 10*ms)
				})
				if err != nil {
					return err
				}
				tasks = append(tasks, task)
			}
			tk.Loop().CallLater(ms, func() {
				tasks[1].Cancel()
				tasks[1].Uncancel()
			})
			// c1 waits again, at the back: counted once.
			tk.Loop().CallLater(2*ms, func() { r.log("queued=%d", g.Queued()) })
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s c0 start running=1", "2ms queued=2", "10ms c2 start running=1", "20ms c1 start running=1"}, r)
}

// A queued child costs no goroutine until it starts.
func TestBoundedTaskGroup_QueuedChildrenHaveNoGoroutine(t *testing.T) {
	runVirtual(t, func(tk *T) error {
		return BoundedTaskGroup(tk, 2, func(g *BoundedGroup) error {
			before := runtime.NumGoroutine()
			for range 1000 {
				if _, err := SpawnBoundedErr(g, func(tk *T) error { return Sleep(tk, ms) }); err != nil {
					return err
				}
			}
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			if d := runtime.NumGoroutine() - before; d > 10 || g.Queued() != 998 {
				t.Errorf("%d more goroutines, %d queued", d, g.Queued())
			}
			return nil
		})
	})
}

// A queued child whose context is already done (WithContext) is cancelled
// at creation: it ends cancelled at once and never runs.
func TestBoundedTaskGroup_QueuedChildWithDoneContext(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return BoundedTaskGroup(tk, 1, func(g *BoundedGroup) error {
			if _, err := SpawnBoundedErr(g, func(tk *T) error { r.log("first"); return Sleep(tk, 10*ms) }); err != nil {
				return err
			}
			late, err := SpawnBoundedErr(g, func(tk *T) error { r.log("late ran"); return nil }, WithContext(ctx))
			if err != nil {
				return err
			}
			if err := Sleep(tk, ms); err != nil {
				return err
			}
			r.log("late done=%v cancelled=%v", late.Done(), late.Cancelled())
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s first", "1ms late done=true cancelled=true"}, r)
}
