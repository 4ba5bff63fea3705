package asyncio

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TG-1: the parent must be the running task.
func TestTG1_ParentMustBeCurrentTask(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		other := CreateTask(tk, func(*T) (int, error) { return 0, nil })
		err := TaskGroup(other.T(), func(g *Group) error {
			r.log("body ran")
			return nil
		})
		r.log("%s", describe(err))
		_, err = other.Await(tk)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`0s RuntimeError("TaskGroup <TaskGroup> cannot determine the parent task")`}, r)
}

// TG-2: Spawn before entry, after exit, while aborting; allowed while exit waits.
func TestTG2_SpawnStates(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var zero Group
		_, err := Spawn(&zero, sleeper(r, "never", 0, 0))
		r.log("%s", describe(err))

		var saved *Group
		err = TaskGroup(tk, func(g *Group) error {
			saved = g
			Spawn(g, failer(r, "f", time.Second, errBoom))
			if err := Sleep(tk, 10*time.Second); err != nil {
				r.log("body: %v", err)
			}
			_, err := Spawn(g, sleeper(r, "late", 0, 0))
			r.log("%s", describe(err))
			return nil
		})
		r.log("tg: %v", err)
		_, err = Spawn(saved, sleeper(r, "after", 0, 0))
		r.log("%s", describe(err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`0s RuntimeError("TaskGroup <TaskGroup> has not been entered")`,
		"0s f start",
		"1s f fails",
		"1s body: asyncio: cancelled",
		`1s RuntimeError("TaskGroup <TaskGroup errors=1 cancelling> is shutting down")`,
		"1s tg: unhandled errors in a TaskGroup (1 sub-exception)",
		`1s RuntimeError("TaskGroup <TaskGroup cancelling> is finished")`,
	}, r)
}

// TG-2: children may spawn siblings while __aexit__ waits for them.
func TestTG2_SpawnWhileExitWaits(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(ctk *T) (int, error) {
				r.log("a start")
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(ctk, time.Second)
				_, err := Spawn(g, sleeper(r, "b", time.Second, 0))
				r.log("a spawned b: %v", err)
				return 0, nil
			})
			r.log("body returns")
			return nil
		})
		r.log("tg: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s body returns",
		"0s a start",
		"1s a spawned b: <nil>",
		"1s b start",
		"2s b done",
		"2s tg: <nil>",
	}, r)
}

// TG-3: the done handler runs one iteration after the child finished; a
// child cancelled by the user never aborts the group.
func TestTG3_UserCancelledChildDoesNotAbort(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			a, _ := Spawn(g, sleeper(r, "a", 5*time.Second, 1))
			Spawn(g, sleeper(r, "b", 2*time.Second, 2))
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(tk, time.Second)
			a.Cancel("user")
			return nil
		})
		r.log("tg: %v, cancelling=%d", err, tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s a start",
		"0s b start",
		"1s a: asyncio: cancelled: user",
		"2s b done",
		"2s tg: <nil>, cancelling=0",
	}, r)
}

// TG-3: abort cancels the not-done children in creation order.
func TestTG3_AbortCancelsInCreationOrder(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			for i := range 4 {
				Spawn(g, sleeper(r, fmt.Sprint("c", i), 5*time.Second, i))
			}
			Spawn(g, failer(r, "f", time.Second, errBoom))
			return nil
		})
		r.log("tg: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c0 start", "0s c1 start", "0s c2 start", "0s c3 start", "0s f start",
		"1s f fails",
		"1s c0: asyncio: cancelled", "1s c1: asyncio: cancelled",
		"1s c2: asyncio: cancelled", "1s c3: asyncio: cancelled",
		"1s tg: unhandled errors in a TaskGroup (1 sub-exception)",
	}, r)
}

// TG-3: a child failing after its parent finished is reported to the
// exception handler (white box: the state cannot be reached through
// TaskGroup, as in asyncio).
func TestTG3_ParentAlreadyDone(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		parent := CreateTask(tk, func(*T) (int, error) { return 0, nil }, WithName("parent"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		parent.Await(tk)
		g := &Group{loop: tk.Loop(), parent: parent.T(), entered: true}
		child, _ := Spawn(g, func(*T) (int, error) { return 0, errBoom }, WithName("kid"))
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		child.Await(tk)
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		Sleep(tk, 0) // the done handler runs one iteration later
		r.log("parent cancelling=%d", parent.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s handler: Task <Task finished name='kid'> has errored out but its parent task <Task finished name='parent'> is already completed: boom",
		"0s parent cancelling=0",
	}, r)
}

// TG-6 a: a child error cancels siblings and the body; the parent goes on.
func TestTG6a_ChildErrorCancelsSiblingsAndBody(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, failer(r, "c1", time.Second, errBoom))
			Spawn(g, sleeper(r, "c2", 5*time.Second, 0))
			err := Sleep(tk, 10*time.Second)
			r.log("body: %v", err)
			return err
		})
		var eg *ExceptionGroup
		r.log("tg: %v; EG=%v boom=%v cancelled=%v cancelling=%d",
			err, errors.As(err, &eg), errors.Is(err, errBoom), IsCancelled(err), tk.Cancelling())
		r.log("sleep: %v", Sleep(tk, time.Second))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c1 start",
		"0s c2 start",
		"1s c1 fails",
		"1s c2: asyncio: cancelled",
		"1s body: asyncio: cancelled",
		"1s tg: unhandled errors in a TaskGroup (1 sub-exception); EG=true boom=true cancelled=false cancelling=0",
		"2s sleep: <nil>",
	}, r)
}

// TG-6 b: a body error cancels and awaits the children.
func TestTG6b_BodyErrorCancelsChildren(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(ctk *T) (int, error) {
				err := Sleep(ctk, 5*time.Second)
				r.log("c: %v", err)
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(ctk, time.Second) // cleanup takes a while
				r.log("c cleaned up")
				return 0, err
			})
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(tk, time.Second)
			return errKey
		})
		r.log("tg: %v key=%v", err, errors.Is(err, errKey))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s c: asyncio: cancelled",
		"2s c cleaned up",
		"2s tg: unhandled errors in a TaskGroup (1 sub-exception) key=true",
	}, r)
}

// TG-6 c: a panic in the body (KeyboardInterrupt analogue) cancels and
// awaits the children, then continues bare.
func TestTG6c_BodyPanicAwaitsChildrenThenRepanics(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) (err error) {
		defer func() {
			r.log("recovered: %v", recover())
		}()
		//asynciovet:ignore droppedcancel the outcome of this await is not what the test checks: the event log is
		TaskGroup(tk, func(g *Group) error {
			Spawn(g, sleeper(r, "c", 5*time.Second, 0))
			Spawn(g, failer(r, "f", 0, errBoom))
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			Sleep(tk, 0)
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			Sleep(tk, 0)
			panic("interrupt")
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c start",
		"0s f start",
		"0s f fails",
		"0s c: asyncio: cancelled",
		"0s handler: TaskGroup task exception was not propagated because the TaskGroup body is being closed with a BaseException: boom",
		"0s recovered: interrupt",
	}, r)
}

// TG-6 d analogue: a panicking child is a *PanicError member of the group.
func TestTG6d_ChildPanicIsMember(t *testing.T) {
	_, err := runMain(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(*T) (int, error) { panic(errBoom) })
			return nil
		})
	})
	var pe *PanicError
	if !errors.As(err, &pe) || !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want an ExceptionGroup holding a *PanicError wrapping boom", err)
	}
}

// TG-6 e: an outside cancel while the body awaits cancels all children and
// the CancelledError propagates; same when it arrives while exit waits.
func TestTG6e_OutsideCancel(t *testing.T) {
	for _, during := range []string{"body", "exit"} {
		t.Run(during, func(t *testing.T) {
			r, err := runMain(t, func(tk *T, r *eventLog) error {
				w := CreateTask(tk, func(wt *T) (int, error) {
					err := TaskGroup(wt, func(g *Group) error {
						Spawn(g, sleeper(r, "c1", 5*time.Second, 0))
						Spawn(g, sleeper(r, "c2", 5*time.Second, 0))
						if during == "body" {
							err := Sleep(wt, 10*time.Second)
							r.log("body: %v", err)
							return err
						}
						return nil
					})
					r.log("tg: %v", err)
					return 0, err
				})
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(tk, time.Second)
				w.Cancel("ext")
				_, err := w.Await(tk)
				r.log("w: %v cancelled=%v cancelling=%d", err, w.Cancelled(), w.Cancelling())
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"0s c1 start", "0s c2 start"}
			if during == "body" {
				want = append(want, "1s body: asyncio: cancelled: ext")
			}
			want = append(want,
				"1s c1: asyncio: cancelled",
				"1s c2: asyncio: cancelled",
				"1s tg: asyncio: cancelled: ext",
				"1s w: asyncio: cancelled: ext cancelled=true cancelling=1",
			)
			checkEvents(t, want, r)
		})
	}
}

// TG-6 g: children raising while cancelled, and a body turning the
// CancelledError into its own error, end up in the group instead of CE.
func TestTG6g_ErrorsWhileCancelling(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, failer(r, "f", time.Second, errBoom))
			Spawn(g, func(ctk *T) (int, error) {
				if err := Sleep(ctk, 5*time.Second); err != nil {
					return 0, errKey
				}
				return 0, nil
			})
			if err := Sleep(tk, 10*time.Second); err != nil {
				return errMy
			}
			return nil
		})
		var eg *ExceptionGroup
		errors.As(err, &eg)
		r.log("members: %v cancelling=%d", eg.Errs, tk.Cancelling())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s f start",
		"1s f fails",
		"1s members: [boom key my] cancelling=0",
	}, r)
}

// TG-6 h: an inner group's ExceptionGroup is a member of the outer one.
func TestTG6h_Nested(t *testing.T) {
	_, err := runMain(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(outer *Group) error {
			Spawn(outer, sleeper(r, "o", 5*time.Second, 0))
			return TaskGroup(tk, func(inner *Group) error {
				Spawn(inner, failer(r, "i", time.Second, errBoom))
				return Sleep(tk, 10*time.Second)
			})
		})
	})
	var outerEG *ExceptionGroup
	if !errors.As(err, &outerEG) || len(outerEG.Errs) != 1 {
		t.Fatalf("got %v", err)
	}
	innerEG, ok := outerEG.Errs[0].(*ExceptionGroup)
	if !ok || len(innerEG.Errs) != 1 || innerEG.Errs[0] != errBoom || !errors.Is(err, errBoom) {
		t.Fatalf("inner member %#v", outerEG.Errs[0])
	}
}

// TG-7: children's errors in done-handler order, the body's error last.
func TestTG7_MemberOrder(t *testing.T) {
	var ea, eb, ec = errors.New("a"), errors.New("b"), errors.New("c")
	// convert fails with err once cancelled, after a cleanup taking d.
	convert := func(d time.Duration, err error) func(*T) (int, error) {
		return func(ctk *T) (int, error) {
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, time.Hour)
			//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
			Sleep(ctk, d)
			return 0, err
		}
	}
	_, err := runMain(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(g *Group) error {
			// c is created first but finishes last: order follows completion.
			Spawn(g, convert(3*time.Second, ec))
			Spawn(g, convert(2*time.Second, eb))
			Spawn(g, convert(time.Second, ea))
			//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
			Sleep(tk, 0)
			return errKey
		})
	})
	var eg *ExceptionGroup
	if !errors.As(err, &eg) {
		t.Fatalf("got %v", err)
	}
	want := fmt.Sprint([]error{ea, eb, ec, errKey})
	if got := fmt.Sprint(eg.Errs); got != want {
		t.Errorf("members %s, want %s", got, want)
	}
}

// TG-7: members follow done-handler order, not creation order.
func TestTG7_DoneHandlerOrder(t *testing.T) {
	var ea, eb = errors.New("a"), errors.New("b")
	_, err := runMain(t, func(tk *T, r *eventLog) error {
		return TaskGroup(tk, func(g *Group) error {
			Spawn(g, func(ctk *T) (int, error) {
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(ctk, 5*time.Second) // cancelled by a's failure
				return 0, eb
			})
			Spawn(g, func(ctk *T) (int, error) {
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(ctk, time.Second)
				return 0, ea
			})
			return nil
		})
	})
	var eg *ExceptionGroup
	if !errors.As(err, &eg) || fmt.Sprint(eg.Errs) != "[a b]" {
		t.Fatalf("got %v", err)
	}
}

// 3.13: an outside cancellation arriving together with a child error is
// re-armed, so the parent's next await raises it.
func TestTG4_SimultaneousInternalAndExternalCancelRearms(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		var w *Task[int]
		w = CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, func(ctk *T) (int, error) {
					//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
					Sleep(ctk, time.Second)
					w.Cancel("ext") // the outside cancel, same iteration as the failure
					return 0, errBoom
				})
				err := Sleep(wt, 10*time.Second)
				r.log("body: %v", err)
				return err
			})
			r.log("tg: %v cancelling=%d", err, wt.Cancelling())
			err = Sleep(wt, time.Second)
			r.log("next await: %v", err)
			return 0, err
		})
		_, err := w.Await(tk)
		r.log("w: %v cancelled=%v", err, w.Cancelled())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"1s body: asyncio: cancelled: ext",
		"1s tg: unhandled errors in a TaskGroup (1 sub-exception) cancelling=1",
		"1s next await: asyncio: cancelled",
		"1s w: asyncio: cancelled cancelled=true",
	}, r)
}

// TG-4 step 6 with 3.13 uncancel: a Cancel from the body that was never
// delivered is withdrawn when the count reaches zero.
func TestTG4_UncancelReachingZeroWithdrawsPendingCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			g.Cancel() // cancels this very task; not delivered before exit
			return nil
		})
		r.log("tg: %v cancelling=%d", err, tk.Cancelling())
		r.log("next await: %v", Sleep(tk, time.Second))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s tg: <nil> cancelling=0",
		"1s next await: <nil>",
	}, r)
}

// TG-8 (3.15): Group.Cancel ends the group early without an error.
func TestTG8_GroupCancel(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		err := TaskGroup(tk, func(g *Group) error {
			Spawn(g, sleeper(r, "a", 5*time.Second, 0))
			Spawn(g, func(ctk *T) (int, error) {
				//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
				Sleep(ctk, time.Second)
				r.log("b cancels the group")
				g.Cancel()
				g.Cancel() // idempotent
				return 0, nil
			})
			err := Sleep(tk, 10*time.Second)
			r.log("body: %v", err)
			return err
		})
		r.log("tg: %v cancelling=%d", err, tk.Cancelling())
		g := &Group{}
		g.Cancel() // not entered: no-op
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s a start",
		"1s b cancels the group",
		"1s a: asyncio: cancelled",
		"1s body: asyncio: cancelled",
		"1s tg: <nil> cancelling=0",
	}, r)
}

// gh-155433: after Group.Cancel, an outside cancellation arriving while
// exit waits is not dropped.
func TestTG8_GroupCancelKeepsForeignCancellation(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		w := CreateTask(tk, func(wt *T) (int, error) {
			err := TaskGroup(wt, func(g *Group) error {
				Spawn(g, func(ctk *T) (int, error) {
					err := Sleep(ctk, 5*time.Second)
					//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
					Sleep(ctk, time.Second) // slow cleanup
					return 0, err
				})
				Spawn(g, func(ctk *T) (int, error) {
					//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
					Sleep(ctk, time.Second)
					g.Cancel()
					return 0, nil
				})
				return nil
			})
			r.log("tg: %v", err)
			return 0, err
		})
		//asynciovet:ignore droppedcancel the test sleeps to be cancelled or to let time pass; the outcome is checked elsewhere
		Sleep(tk, 1500*time.Millisecond)
		w.Cancel("ext")
		_, err := w.Await(tk)
		r.log("w: %v", err)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"2s tg: asyncio: cancelled: ext",
		"2s w: asyncio: cancelled: ext",
	}, r)
}

// CreateTaskErr and SpawnErr take a function with no value: its error is
// the outcome. A nil function panics before anything is created.
func TestTaskErrForms(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		ok := CreateTaskErr(tk, func(*T) error { return nil }, WithName("ok"))
		bad := CreateTaskErr(tk, func(*T) error { return errBoom })
		_, err := ok.Await(tk)
		r.log("%s: %v", ok.Name(), err)
		_, err = bad.Await(tk)
		r.log("bad: %v", err)
		err = TaskGroup(tk, func(g *Group) error {
			_, err := SpawnErr(g, func(*T) error { return errKey })
			return err
		})
		r.log("group: %s", describe(err))
		//asynciovet:ignore unawaitedtask CreateTask must panic here (misuse under test): no task is created
		r.log("%v", mustPanic(t, "nil", func() { CreateTaskErr(tk, nil) }))
		return nil
	})
	checkEvents(t, []string{
		"ok: <nil>", "bad: boom",
		`group: ExceptionGroup("unhandled errors in a TaskGroup", [*errors.errorString("key")])`,
		"asyncio: CreateTaskErr: nil coroutine function",
	}, &r)
}
