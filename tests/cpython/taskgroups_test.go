package cpython

// CPython 3.13 Lib/test/test_asyncio/test_taskgroups.py.

import (
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

func zeroDivision() error { return exc("ZeroDivisionError", "division by zero") }

// crashAfter is `async def crash_after(t): await asyncio.sleep(t); raise
// ValueError(t)`.
func crashAfter(d time.Duration) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) {
		if err := asyncio.Sleep(tk, d); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, exc("ValueError", d.Seconds())
	}
}

// sleepThenZeroDivision is `await asyncio.sleep(d); 1 / 0`.
func sleepThenZeroDivision(d time.Duration) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) {
		if err := asyncio.Sleep(tk, d); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, zeroDivision()
	}
}

// sleepFinallyZeroDivision is `try: await asyncio.sleep(d) finally: 1 / 0`.
func sleepFinallyZeroDivision(d time.Duration) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) {
		asyncio.Sleep(tk, d)
		return struct{}{}, zeroDivision()
	}
}

func TestTaskGroups_test_taskgroup_01(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var t1, t2 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			t1 = spawn(t, g, sleepReturn(100*ms, 42))
			t2 = spawn(t, g, sleepReturn(200*ms, 11))
			return nil
		})
		noErr(t, err)
		eq(t, result(t, t1), 42)
		eq(t, result(t, t2), 11)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_02(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var t1, t2 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			t1 = spawn(t, g, sleepReturn(100*ms, 42))
			if err := asyncio.Sleep(tk, 150*ms); err != nil {
				return err
			}
			t2 = spawn(t, g, sleepReturn(200*ms, 11))
			return nil
		})
		noErr(t, err)
		eq(t, result(t, t1), 42)
		eq(t, result(t, t2), 11)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_03(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var t1, t2 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			t1 = spawn(t, g, sleepReturn(1000*ms, 42))
			if err := asyncio.Sleep(tk, 150*ms); err != nil {
				return err
			}
			// cancel t1 explicitly, i.e. everything should continue
			// working as expected.
			t1.Cancel()
			t2 = spawn(t, g, sleepReturn(200*ms, 11))
			return nil
		})
		noErr(t, err)
		check(t, t1.Cancelled(), "t1 cancelled")
		eq(t, result(t, t2), 11)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_04(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num, t2Cancel := 0, false
		var t2 *asyncio.Task[struct{}]
		foo2 := fn0(func(tk *asyncio.T) error {
			if err := asyncio.Sleep(tk, 1000*ms); err != nil {
				t2Cancel = true
				return err
			}
			num++
			return nil
		})
		runner := fn0(func(tk *asyncio.T) error {
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, sleepThenZeroDivision(100*ms))
				t2 = spawn(t, g, foo2)
				return nil
			})
			if err != nil {
				return err
			}
			num += 10
			return nil
		})
		_, err := asyncio.CreateTask(tk, runner).Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		eq(t, num, 0)
		check(t, t2Cancel, "t2_cancel")
		check(t, t2.Cancelled(), "t2 cancelled")
		return nil
	})
}

func TestTaskGroups_test_cancel_children_on_child_error(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num, t2Cancel, runnerCancel := 0, false, false
		foo2 := fn0(func(tk *asyncio.T) error {
			if err := asyncio.Sleep(tk, 5000*ms); err != nil {
				t2Cancel = true
				return err
			}
			num++
			return nil
		})
		runner := fn0(func(tk *asyncio.T) error {
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, sleepThenZeroDivision(100*ms))
				spawn(t, g, sleepThenZeroDivision(100*ms))
				spawn(t, g, sleepThenZeroDivision(100*ms))
				spawn(t, g, foo2)
				if err := asyncio.Sleep(tk, 10000*ms); err != nil {
					runnerCancel = true
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			num += 10
			return nil
		})
		_, err := asyncio.CreateTask(tk, runner).Await(tk)
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		eq(t, num, 0)
		check(t, t2Cancel, "t2_cancel")
		check(t, runnerCancel, "runner_cancel")
		return nil
	})
}

func TestTaskGroups_test_cancellation(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num := 0
		foo := fn0(func(tk *asyncio.T) error {
			err := asyncio.Sleep(tk, 5000*ms)
			if asyncio.IsCancelled(err) {
				num++
			}
			return err
		})
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				for range 5 {
					spawn(t, g, foo)
				}
				return nil
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		cancelled(t, err)
		eq(t, num, 5)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_07(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num := 0
		foo := fn0(func(tk *asyncio.T) error {
			err := asyncio.Sleep(tk, 5000*ms)
			if asyncio.IsCancelled(err) {
				num++
			}
			return err
		})
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				for range 5 {
					spawn(t, g, foo)
				}
				err := asyncio.Sleep(tk, 10000*ms)
				if asyncio.IsCancelled(err) {
					num += 10
				}
				return err
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		cancelled(t, err)
		eq(t, num, 15)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_08(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				for range 5 {
					spawn(t, g, sleepFinallyZeroDivision(10000*ms))
				}
				return asyncio.Sleep(tk, 10000*ms)
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_09(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var t1, t2 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			t1 = spawn(t, g, sleepReturn(1000*ms, 42))
			t2 = spawn(t, g, sleepReturn(2000*ms, 11))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			return zeroDivision()
		})
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		check(t, t1.Cancelled(), "t1 cancelled")
		check(t, t2.Cancelled(), "t2 cancelled")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_10(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var t1, t2 *asyncio.Task[int]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			t1 = spawn(t, g, sleepReturn(1000*ms, 42))
			t2 = spawn(t, g, sleepReturn(2000*ms, 11))
			return zeroDivision()
		})
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		check(t, t1.Cancelled(), "t1 cancelled")
		check(t, t2.Cancelled(), "t2 cancelled")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_11(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(*asyncio.Group) error {
				return asyncio.TaskGroup(tk, func(g2 *asyncio.Group) error {
					for range 5 {
						spawn(t, g2, sleepFinallyZeroDivision(10000*ms))
					}
					return asyncio.Sleep(tk, 10000*ms)
				})
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		eq(t, errorTypes(err), []string{"ExceptionGroup"})
		eq(t, errorTypes(group(t, err).Errs[0]), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_12(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g1 *asyncio.Group) error {
				spawn(t, g1, sleepFn(10000*ms))
				return asyncio.TaskGroup(tk, func(g2 *asyncio.Group) error {
					for range 5 {
						spawn(t, g2, sleepFinallyZeroDivision(10000*ms))
					}
					return asyncio.Sleep(tk, 10000*ms)
				})
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		eq(t, errorTypes(err), []string{"ExceptionGroup"})
		eq(t, errorTypes(group(t, err).Errs[0]), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_13(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g1 *asyncio.Group) error {
				spawn(t, g1, crashAfter(100*ms))
				return asyncio.TaskGroup(tk, func(g2 *asyncio.Group) error {
					spawn(t, g2, crashAfter(10000*ms))
					return nil
				})
			})
		}))
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ValueError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_14(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g1 *asyncio.Group) error {
				spawn(t, g1, crashAfter(10000*ms))
				return asyncio.TaskGroup(tk, func(g2 *asyncio.Group) error {
					spawn(t, g2, crashAfter(100*ms))
					return nil
				})
			})
		}))
		_, err := r.Await(tk)
		eq(t, errorTypes(err), []string{"ExceptionGroup"})
		eq(t, errorTypes(group(t, err).Errs[0]), []string{"ValueError"})
		return nil
	})
}

// crashSoonBody is the body of test_taskgroup_15/16: crash_soon() in the
// group; on cancellation sleep 0.5 s more, then re-raise.
func crashSoonBody(t *testing.T, tk *asyncio.T) error {
	return asyncio.TaskGroup(tk, func(g1 *asyncio.Group) error {
		spawn(t, g1, sleepThenZeroDivision(300*ms))
		if err := asyncio.Sleep(tk, 10000*ms); err != nil {
			if asyncio.IsCancelled(err) {
				asyncio.Sleep(tk, 500*ms)
			}
			return err
		}
		return nil
	})
}

func TestTaskGroups_test_taskgroup_15(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return crashSoonBody(t, tk) }))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_16(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			nested := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error { return crashSoonBody(t, tk) }))
			_, err := nested.Await(tk)
			return err
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_17(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num := 0
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(*asyncio.Group) error {
				err := asyncio.Sleep(tk, 10000*ms)
				if asyncio.IsCancelled(err) {
					num += 10
				}
				return err
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		cancelled(t, err)
		eq(t, num, 10)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_18(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		num := 0
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(*asyncio.Group) error {
				if err := asyncio.Sleep(tk, 10000*ms); asyncio.IsCancelled(err) {
					num += 10
					// This isn't a good idea, but we have to support this
					// weird case.
					return exc("MyExc")
				}
				return nil
			})
		}))
		asyncio.Sleep(tk, 100*ms)
		check(t, !r.Done(), "r not done")
		r.Cancel()
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"MyExc"})
		eq(t, num, 10)
		return nil
	})
}

// nestedRaising is `async def nested(): try: await asyncio.sleep(10)
// finally: raise err`.
func nestedRaising(tk *asyncio.T, err error) error {
	asyncio.Sleep(tk, 10000*ms)
	return err
}

func TestTaskGroups_test_taskgroup_19(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, sleepThenZeroDivision(100*ms))
				return nestedRaising(tk, exc("MyExc"))
			})
		}))
		_, err := r.Await(tk)
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"MyExc", "ZeroDivisionError"})
		return nil
	})
}

// keyboardInterrupt stands for KeyboardInterrupt: in Go a BaseException
// escaping a TaskGroup body is a panic (README: "KeyboardInterrupt in a
// TaskGroup body").
type keyboardInterrupt struct{}

func TestTaskGroups_test_taskgroup_20(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		(&recorder{}).handle(tk.Loop()) // the lost ZeroDivisionError is reported there
		var recovered any
		func() {
			defer func() { recovered = recover() }()
			asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, sleepThenZeroDivision(100*ms))
				asyncio.Sleep(tk, 10000*ms)
				panic(keyboardInterrupt{})
			})
		}()
		eq(t, recovered, any(keyboardInterrupt{}), "assertRaises(KeyboardInterrupt)")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_20a(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// MyBaseExc is a BaseException; Go errors have one kind, and the
		// group collects it all the same (BaseExceptionGroup in CPython).
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, sleepThenZeroDivision(100*ms))
			return nestedRaising(tk, exc("MyBaseExc"))
		})
		eq(t, errorTypes(err), []string{"MyBaseExc", "ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_21a(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, fn0(func(tk *asyncio.T) error {
				if err := asyncio.Sleep(tk, 100*ms); err != nil {
					return err
				}
				return exc("MyBaseExc")
			}))
			return nestedRaising(tk, exc("TypeError"))
		})
		eq(t, errorTypes(err), []string{"MyBaseExc", "TypeError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_22(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		r := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, sleepReturn(1000*ms, 42))
				spawn(t, g, sleepReturn(2000*ms, 11))
				return nil
			})
		}))
		asyncio.Sleep(tk, 50*ms)
		r.Cancel()
		_, err := r.Await(tk)
		cancelled(t, err)
		return nil
	})
}

func TestTaskGroups_test_taskgroup_23(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			for count := range 10 {
				if err := asyncio.Sleep(tk, 100*ms); err != nil {
					return err
				}
				spawn(t, g, sleepFn(300*ms))
				if count == 5 {
					check(t, groupTasks(g) < 5, "len(g._tasks) < 5: ", g)
				}
			}
			if err := asyncio.Sleep(tk, 1350*ms); err != nil {
				return err
			}
			eq(t, groupTasks(g), 0, "len(g._tasks)")
			return nil
		})
	})
}

func TestTaskGroups_test_taskgroup_24(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, fn0(func(tk *asyncio.T) error {
				if err := asyncio.Sleep(tk, 100*ms); err != nil {
					return err
				}
				spawn(t, g, sleepFn(100*ms))
				spawn(t, g, sleepFn(200*ms))
				return nil
			}))
			return nil
		})
	})
}

func TestTaskGroups_test_taskgroup_25(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		nhydras := 0
		var hydra func(g *asyncio.Group) func(*asyncio.T) (struct{}, error)
		hydra = func(g *asyncio.Group) func(*asyncio.T) (struct{}, error) {
			return fn0(func(tk *asyncio.T) error {
				nhydras++
				if err := asyncio.Sleep(tk, 10*ms); err != nil {
					return err
				}
				// Raises RuntimeError once the group is shutting down,
				// which ends this hydra, as in CPython.
				if _, err := asyncio.Spawn(g, hydra(g)); err != nil {
					return err
				}
				_, err := asyncio.Spawn(g, hydra(g))
				return err
			})
		}
		hercules := fn0(func(tk *asyncio.T) error {
			for nhydras < 10 {
				if err := asyncio.Sleep(tk, 15*ms); err != nil {
					return err
				}
			}
			return zeroDivision()
		})
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, hydra(g))
			spawn(t, g, hercules)
			return nil
		})
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		check(t, nhydras >= 10, "nhydras >= 10")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_task_name(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			task := spawn(t, g, sleepFn(0), asyncio.WithName("yolo"))
			eq(t, task.Name(), "yolo")
			return nil
		})
	})
}

func TestTaskGroups_test_taskgroup_no_create_task_after_failure(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, sleepThenZeroDivision(1*ms))
			spawn(t, g, fn0(func(tk *asyncio.T) error {
				if err := asyncio.Sleep(tk, 1000*ms); asyncio.IsCancelled(err) {
					_, err := asyncio.Spawn(g, sleepThenZeroDivision(1*ms))
					raises(t, err, "*asyncio.RuntimeError")
				}
				return nil
			}))
			return nil
		})
		raises(t, err, "ExceptionGroup")
		eq(t, errorTypes(err), []string{"ZeroDivisionError"})
		return nil
	})
}

func TestTaskGroups_test_taskgroup_context_manager_exit_raises(t *testing.T) {
	// See https://github.com/python/cpython/issues/95289
	run(t, func(tk *asyncio.T) error {
		main := asyncio.CreateTask(tk, fn0(func(tk *asyncio.T) error {
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				// async with database(): its exit raises CustomException
				// whatever the block did.
				spawn(t, g, fn0(func(*asyncio.T) error { return exc("CustomException") }))
				asyncio.Sleep(tk, 1000*ms)
				return exc("CustomException")
			})
			eg := group(t, err)
			eq(t, errorTypes(eg), []string{"CustomException"}, "except* CustomException")
			eq(t, tk.Cancelling(), 0)
			eq(t, len(eg.Errs), 2)
			return nil
		}))
		_, err := main.Await(tk)
		return err
	})
}

// test_taskgroup_finished, with the check that the coroutine never runs
// (CPython: it is closed, no "never awaited" warning).
func TestTaskGroups_test_taskgroup_finished(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var tg *asyncio.Group
		noErr(t, asyncio.TaskGroup(tk, func(g *asyncio.Group) error { tg = g; return nil }))
		ran := false
		_, err := asyncio.Spawn(tg, fn0(func(*asyncio.T) error { ran = true; return nil }))
		raisesRegex(t, err, "*asyncio.RuntimeError", "is finished")
		asyncio.Sleep(tk, 0)
		check(t, !ran, "the coroutine never ran")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_not_entered(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		var tg asyncio.Group // TaskGroup() not entered with `async with`
		_, err := asyncio.Spawn(&tg, sleepFn(0))
		raisesRegex(t, err, "*asyncio.RuntimeError", "has not been entered")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_without_parent_task(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		// await_without_task: tg.__aenter__() driven outside any task; here
		// TaskGroup is called from a plain callback with a task handle.
		done := asyncio.NewFuture[error](tk)
		tk.Loop().CallSoon(func() {
			done.SetResult(asyncio.TaskGroup(tk, func(*asyncio.Group) error {
				t.Error("the body ran")
				return nil
			}))
		})
		err, _ := done.Await(tk)
		raisesRegex(t, err, "*asyncio.RuntimeError", "parent task")
		var tg asyncio.Group
		_, err = asyncio.Spawn(&tg, sleepFn(0))
		raisesRegex(t, err, "*asyncio.RuntimeError", "has not been entered")
		return nil
	})
}

func TestTaskGroups_test_coro_closed_when_tg_closed(t *testing.T) {
	loop := asyncio.NewTestLoop()
	defer loop.Close()
	task := asyncio.CreateTask(loop, fn0(func(tk *asyncio.T) error {
		var tg *asyncio.Group
		if err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error { tg = g; return nil }); err != nil {
			return err
		}
		_, err := asyncio.Spawn(tg, sleepFn(0))
		raisesRegex(t, err, "*asyncio.RuntimeError", "is finished")
		return nil
	}))
	noErr(t, loop.RunUntilComplete(task))
}

// raiseAfter is `async def raise_after(t, e): await asyncio.sleep(t);
// raise e()`.
func raiseAfter(d time.Duration, class string) func(*asyncio.T) (struct{}, error) {
	return func(tk *asyncio.T) (struct{}, error) {
		if err := asyncio.Sleep(tk, d); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, exc(class)
	}
}

// exceptStar is `except* class: pass` for a single-class group: it
// returns nil if err is an ExceptionGroup of only class, else err.
func exceptStar(err error, class string) error {
	if types := errorTypes(err); len(types) == 1 && types[0] == class {
		return nil
	}
	return err
}

func TestTaskGroups_test_cancelling_level_preserved(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			spawn(t, g, raiseAfter(0, "RuntimeError"))
			return nil
		})
		noErr(t, exceptStar(err, "RuntimeError"))
		eq(t, tk.Cancelling(), 0)
		return nil
	})
}

func TestTaskGroups_test_nested_groups_both_cancelled(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		err := asyncio.TaskGroup(tk, func(outer *asyncio.Group) error {
			err := asyncio.TaskGroup(tk, func(inner *asyncio.Group) error {
				spawn(t, inner, raiseAfter(0, "RuntimeError"))
				spawn(t, outer, raiseAfter(0, "ValueError"))
				return nil
			})
			check(t, err != nil, "RuntimeError not raised")
			noErr(t, exceptStar(err, "RuntimeError"))
			eq(t, tk.Cancelling(), 1)
			return nil
		})
		check(t, err != nil, "ValueError not raised")
		noErr(t, exceptStar(err, "ValueError"))
		eq(t, tk.Cancelling(), 0)
		return nil
	})
}

func TestTaskGroups_test_error_and_cancel(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		event := asyncio.NewEvent()
		inner := fn0(func(tk *asyncio.T) error {
			err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
				spawn(t, g, fn0(func(tk *asyncio.T) error {
					event.Set()
					asyncio.Sleep(tk, 0)
					return exc("RuntimeError")
				}))
				if err := asyncio.Sleep(tk, 1000*ms); err != nil {
					return err
				}
				t.Error("Sleep in group should have been cancelled")
				return nil
			})
			if exceptStar(err, "RuntimeError") == nil {
				eq(t, tk.Cancelling(), 1)
			}
			eq(t, tk.Cancelling(), 1)
			if err := asyncio.Sleep(tk, 1000*ms); err != nil {
				return err
			}
			t.Error("Sleep after group should have been cancelled")
			return nil
		})
		task := asyncio.CreateTask(tk, inner)
		if err := event.Wait(tk); err != nil {
			return err
		}
		eq(t, task.Cancelling(), 0)
		task.Cancel()
		eq(t, task.Cancelling(), 1)
		_, err := task.Await(tk)
		cancelled(t, err)
		check(t, task.Cancelled(), "t cancelled")
		return nil
	})
}
