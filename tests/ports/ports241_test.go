package ports_test

// Ports p241 onward (h51): programs taken from questions people ask
// because asyncio surprised them (Q&A threads, blog posts, CPython
// issues; each .py names its source at the top), adapted only to be
// deterministic: cancelling a gather that already raised (and a pending
// one with return_exceptions=True), awaiting a task just cancelled
// inside `except`, wait_for waiting for the cancelled task's cleanup, a
// task that swallows its cancellations, Queue.join and a task_done
// skipped on an error path, re-awaiting a shielded task, a closer's own
// cancellation swallowed with its child's, Lock release on cancellation,
// asyncio.timeout(0) taking a prior cancellation for its own
// (gh-134471), a Semaphore permit leaked by a bare acquire, TaskGroup
// fail-fast with a failing cleanup, and an Event cleared by the first of
// two woken waiters. Same conventions as ports_test.go.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// pdStrs is `[d(r) for r in results]` over gather(return_exceptions=True).
func pdStrs[V any](res []asyncio.Outcome[V]) string {
	out := make([]string, len(res))
	for i, o := range res {
		out[i] = pd(o.Err)
	}
	return pstrs(out)
}

// pIntList is repr of a list of ints (pints lives in a unix-only file).
func pIntList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// ---------------------------------------------------------------------------
// p241_gather_cancel_after_raise.py

type errCancelOthers struct{ pyExc }

func TestPortGatherCancelAfterRaise(t *testing.T) {
	runPort(t, cpythonTrace("p241_gather_cancel_after_raise"), func(p *probe, tk *asyncio.T) error {
		mySleep := func(secs time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, secs); err != nil {
					return noValue, err
				}
				if secs == 500*ms {
					return noValue, &errCancelOthers{pyExc{"ErrorThatShouldCancelOtherTasks", "5 is forbidden!"}}
				}
				p.log("Slept for %gsecs.", secs.Seconds())
				return noValue, nil
			}
		}
		secs := []time.Duration{200 * ms, 500 * ms, 700 * ms}

		asker := func() error {
			var fns []func(*asyncio.T) (struct{}, error)
			for _, s := range secs {
				fns = append(fns, mySleep(s))
			}
			sleepers := asyncio.GatherFuncs(tk, fns...)
			_, err := sleepers.Await(tk)
			var fatal *errCancelOthers
			if !errors.As(err, &fatal) {
				return fmt.Errorf("gather: %v", err)
			}
			p.log("Fatal error; cancelling %s", pd(err))
			p.log("sleepers.cancel() -> %s done %s", pb(sleepers.Cancel()), pb(sleepers.Done()))
			return asyncio.Sleep(tk, 500*ms)
		}
		answer := func() error {
			var tasks []*asyncio.Task[struct{}]
			for _, s := range secs {
				tasks = append(tasks, asyncio.CreateTask(tk, mySleep(s)))
			}
			_, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
			var fatal *errCancelOthers
			if !errors.As(err, &fatal) {
				return fmt.Errorf("gather: %v", err)
			}
			p.log("Fatal error; cancelling the children %s", pd(err))
			for _, t := range tasks {
				p.log("cancel -> %s", pb(t.Cancel()))
			}
			res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
			if err != nil {
				return err
			}
			p.log("after %s", pdStrs(res))
			return nil
		}

		p.restart()
		if err := asker(); err != nil {
			return err
		}
		p.restart()
		if err := answer(); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 500*ms); err != nil {
			return err
		}
		p.log("end")

		p.restart() // pending_gather
		g := asyncio.GatherOutcomesFuncs(tk, mySleep(200*ms), mySleep(700*ms))
		waiter := asyncio.CreateTask(tk, func(t *asyncio.T) ([]asyncio.Outcome[struct{}], error) { return g.Await(t) })
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("cancel the waiter -> %s", pb(waiter.Cancel()))
		if _, err := waiter.Await(tk); asyncio.IsCancelled(err) {
			p.log("waiter %s gather cancelled() %s exception %s", pd(err), pb(g.Cancelled()), pd(g.Err()))
		} else {
			return fmt.Errorf("waiter: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p242_gather_hang_cancel_first.py

func TestPortGatherHangCancelFirst(t *testing.T) {
	runPort(t, cpythonTrace("p242_gather_hang_cancel_first"), func(p *probe, tk *asyncio.T) error {
		taskA := func(t *asyncio.T) error {
			for {
				p.log("A running")
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					if asyncio.IsCancelled(err) {
						p.log("A cancelled")
					}
					return err
				}
			}
		}
		taskB := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 270*ms); err != nil {
				return err
			}
			return &runtimeError{pyExc{"RuntimeError", "Failure in B"}}
		}
		answerMain := func(t *asyncio.T) error {
			one := asyncio.CreateTaskErr(t, taskA)
			two := asyncio.CreateTaskErr(t, taskB)
			_, err := asyncio.Gather(t, one, two).Await(t)
			if err != nil && !asyncio.IsCancelled(err) { // except Exception as err
				one.Cancel()
				if _, err := one.Await(t); err != nil {
					return err
				}
				return err
			}
			return err
		}
		fixedMain := func(t *asyncio.T) error {
			one := asyncio.CreateTaskErr(t, taskA)
			two := asyncio.CreateTaskErr(t, taskB)
			_, err := asyncio.Gather(t, one, two).Await(t)
			if err != nil && !asyncio.IsCancelled(err) {
				one.Cancel()
				if _, oerr := one.Await(t); asyncio.IsCancelled(oerr) {
					p.log("one is cancelled: %s cancelling() of main %d", pb(one.Cancelled()), t.Cancelling())
				} else if oerr != nil {
					return oerr
				}
				return err
			}
			return err
		}

		for _, v := range []struct {
			label string
			fn    func(*asyncio.T) error
		}{{"answer's main", answerMain}, {"fixed main", fixedMain}} {
			p.restart()
			task := asyncio.CreateTaskErr(tk, v.fn)
			if _, err := task.Await(tk); err != nil {
				p.log("%s ended with %s cancelled() %s", v.label, pd(err), pb(task.Cancelled()))
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p243_wait_for_waits_cleanup.py

func TestPortWaitForWaitsCleanup(t *testing.T) {
	runPort(t, cpythonTrace("p243_wait_for_waits_cleanup"), func(p *probe, tk *asyncio.T) error {
		graceful := func(t *asyncio.T) (string, error) {
			p.log("Graceful task: Starting work...")
			err := asyncio.Sleep(t, 300*ms)
			if err == nil {
				p.log("Graceful task: Work finished successfully.")
				return "done", nil
			}
			if asyncio.IsCancelled(err) {
				p.log("Graceful task: Cancellation detected! Starting cleanup...")
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return "", err
				}
				p.log("Graceful task: Cleanup complete. Re-raising CancelledError.")
			}
			return "", err
		}
		swallowing := func(t *asyncio.T) (string, error) {
			err := asyncio.Sleep(t, 300*ms)
			if err == nil {
				return "finished", nil
			}
			if asyncio.IsCancelled(err) {
				p.log("swallower: cancelled, returning a value instead")
				if err := asyncio.Sleep(t, 80*ms); err != nil {
					return "", err
				}
				return "partial", nil
			}
			return "", err
		}

		p.restart()
		_, err := asyncio.WaitForFunc(tk, 100*ms, graceful)
		var te *asyncio.TimeoutError
		if !errors.As(err, &te) {
			return fmt.Errorf("wait_for: %v", err)
		}
		p.log("Timeout occurred! %s cause %s", pd(err), pd(te.Cause))

		p.restart()
		task := asyncio.CreateTask(tk, graceful)
		err = asyncio.Timeout(tk, 100*ms, func(*asyncio.TimeoutScope) error {
			_, err := task.Await(tk)
			return err
		})
		if !errors.Is(err, asyncio.ErrTimeout) {
			return fmt.Errorf("timeout: %v", err)
		}
		p.log("timeout() too waited for the cleanup; task cancelled: %s", pb(task.Cancelled()))

		p.restart()
		r, err := asyncio.WaitForFunc(tk, 100*ms, swallowing)
		switch {
		case err == nil:
			p.log("wait_for returned %s instead of raising", r)
		case errors.Is(err, asyncio.ErrTimeout):
			p.log("timed out")
		default:
			return err
		}

		p.restart()
		caller := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return asyncio.WaitForFunc(t, 100*ms, graceful)
		})
		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		caller.Cancel("outer")
		switch r, err := caller.Await(tk); {
		case err == nil:
			p.log("caller returned %s", r)
		case asyncio.IsCancelled(err):
			p.log("caller %s cancelled() %s", pd(err), pb(caller.Cancelled()))
		default:
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p244_stubborn_cancel.py

func TestPortStubbornCancel(t *testing.T) {
	runPort(t, cpythonTrace("p244_stubborn_cancel"), func(p *probe, tk *asyncio.T) error {
		stubborn := func(t *asyncio.T) (int, error) {
			n := 0
			for n < 5 {
				n++
				if err := asyncio.Sleep(t, 100*ms); asyncio.IsCancelled(err) {
					p.log("cancelled? no thanks; cancelling() %d", t.Cancelling())
				} else if err != nil {
					return 0, err
				}
			}
			return n, nil
		}
		processItem := func(item string) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				steps := 0
				for steps < 3 {
					err := asyncio.Sleep(t, 100*ms)
					if asyncio.IsCancelled(err) {
						p.log("cleanup of %s after %d steps", item, steps)
						if err := asyncio.Sleep(t, 50*ms); err != nil {
							return 0, err
						}
						return steps, nil // cleanup done, but no re-raise
					}
					if err != nil {
						return 0, err
					}
					steps++
				}
				return steps, nil
			}
		}

		p.restart()
		task := asyncio.CreateTask(tk, stubborn)
		if err := asyncio.Sleep(tk, 170*ms); err != nil {
			return err
		}
		p.log("cancel -> %s", pb(task.Cancel()))
		if err := asyncio.Sleep(tk, 60*ms); err != nil {
			return err
		}
		p.log("cancel again -> %s cancelling() %d", pb(task.Cancel()), task.Cancelling())
		r, err := task.Await(tk)
		if err != nil {
			return err
		}
		p.log("stubborn returned %d cancelled() %s cancelling() %d", r, pb(task.Cancelled()), task.Cancelling())

		p.restart()
		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, 170*ms, func(s *asyncio.TimeoutScope) error {
			cm = s
			var err error
			r, err = processItem("x")(tk)
			return err
		})
		switch {
		case err == nil:
			p.log("no TimeoutError: got %d expired %s", r, pb(cm.Expired()))
		case errors.Is(err, asyncio.ErrTimeout):
			p.log("TimeoutError")
		default:
			return err
		}
		p.log("after the timeout block, cancelling() %d", tk.Cancelling())

		p.restart()
		inner := asyncio.CreateTask(tk, processItem("y"))
		if err := asyncio.Sleep(tk, 270*ms); err != nil {
			return err
		}
		inner.Cancel()
		r, err = inner.Await(tk)
		if err != nil {
			return err
		}
		p.log("process_item returned %d cancelled() %s", r, pb(inner.Cancelled()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p245_queue_task_done_finally.py

func TestPortQueueTaskDoneFinally(t *testing.T) {
	runPort(t, cpythonTrace("p245_queue_task_done_finally"), func(p *probe, tk *asyncio.T) error {
		process := func(t *asyncio.T, item int) (int, error) {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return 0, err
			}
			if item == 2 {
				return 0, newValueError(fmt.Sprintf("bad item %d", item))
			}
			return item * 10, nil
		}
		consumerNoFinally := func(q *asyncio.Queue[int], done *[]int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					item, err := q.Get(t)
					if err != nil {
						return err
					}
					v, err := process(t, item)
					var ve *valueError
					if errors.As(err, &ve) {
						p.log("consumer error %s", pd(err))
						continue // task_done() is skipped for this item
					} else if err != nil {
						return err
					}
					*done = append(*done, v)
					if err := q.TaskDone(); err != nil {
						return err
					}
				}
			}
		}
		consumerFinally := func(q *asyncio.Queue[int], done *[]int) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				for {
					item, err := q.Get(t)
					if err != nil {
						return err
					}
					v, err := process(t, item)
					var ve *valueError
					if errors.As(err, &ve) {
						p.log("consumer error %s", pd(err))
						err = nil
					} else if err == nil {
						*done = append(*done, v)
					}
					if tdErr := q.TaskDone(); tdErr != nil { // finally
						return tdErr
					}
					if err != nil {
						return err
					}
				}
			}
		}
		run := func(consumer func(*asyncio.Queue[int], *[]int) func(*asyncio.T) error) error {
			q := asyncio.NewQueue[int](0)
			var done []int
			for i := range 5 {
				if err := q.PutNowait(i); err != nil {
					return err
				}
			}
			c := asyncio.CreateTaskErr(tk, consumer(q, &done))
			_, err := asyncio.WaitForFunc(tk, 700*ms, func(t *asyncio.T) (struct{}, error) {
				return noValue, q.Join(t)
			})
			switch {
			case err == nil:
				p.log("join returned; qsize %d done %s", q.Len(), pIntList(done))
			case errors.Is(err, asyncio.ErrTimeout):
				p.log("join timed out; qsize %d empty %s done %s", q.Len(), pb(q.Empty()), pIntList(done))
			default:
				return err
			}
			c.Cancel()
			if _, err := c.Await(tk); asyncio.IsCancelled(err) {
				p.log("consumer cancelled")
			} else if err != nil {
				return err
			}
			return nil
		}

		p.restart()
		if err := run(consumerNoFinally); err != nil {
			return err
		}
		p.restart()
		return run(consumerFinally)
	})
}

// ---------------------------------------------------------------------------
// p246_shield_reawait.py

func TestPortShieldReawait(t *testing.T) {
	runPort(t, cpythonTrace("p246_shield_reawait"), func(p *probe, tk *asyncio.T) error {
		commit := func(name string) func(*asyncio.T) (string, error) {
			return func(t *asyncio.T) (string, error) {
				p.log("%s commit starts", name)
				if err := asyncio.Sleep(t, 300*ms); err != nil {
					return "", err
				}
				p.log("%s commit done", name)
				return name + "-committed", nil
			}
		}
		naive := func(t *asyncio.T) error {
			r, err := asyncio.Shield[string](asyncio.CreateTask(t, commit("naive"))).Await(t)
			if err != nil {
				return err
			}
			p.log("naive got %s", r)
			return nil
		}
		careful := func(t *asyncio.T) error {
			inner := asyncio.CreateTask(t, commit("careful"))
			r, err := asyncio.Shield[string](inner).Await(t)
			if asyncio.IsCancelled(err) {
				p.log("careful: cancelled while shielded; inner done: %s", pb(inner.Done()))
				r, ierr := inner.Await(t)
				if ierr != nil {
					return ierr
				}
				p.log("careful: inner finished with %s ; re-raising", r)
				return err
			}
			if err != nil {
				return err
			}
			p.log("careful got %s", r)
			return nil
		}

		p.restart()
		task := asyncio.CreateTaskErr(tk, naive)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		task.Cancel()
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("naive caller cancelled %s", pd(err))
		} else {
			return fmt.Errorf("naive: %v", err)
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}

		p.restart()
		task = asyncio.CreateTaskErr(tk, careful)
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		task.Cancel("shutdown")
		if _, err := task.Await(tk); asyncio.IsCancelled(err) {
			p.log("careful caller cancelled %s cancelled() %s", pd(err), pb(task.Cancelled()))
		} else {
			return fmt.Errorf("careful: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p247_await_cancelled_task.py

func TestPortAwaitCancelledTask(t *testing.T) {
	runPort(t, cpythonTrace("p247_await_cancelled_task"), func(p *probe, tk *asyncio.T) error {
		foo := func(t *asyncio.T) error {
			err := asyncio.Sleep(t, 10*time.Second)
			if asyncio.IsCancelled(err) {
				p.log("foo cleaning up")
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				p.log("foo cleaned up")
			}
			return err
		}
		closerNaive := func(fooTask *asyncio.Task[struct{}]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				fooTask.Cancel()
				if _, err := fooTask.Await(t); err != nil && !asyncio.IsCancelled(err) {
					return err
				}
				p.log("naive closer carries on; cancelling() %d", t.Cancelling())
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return err
				}
				p.log("naive closer finished normally")
				return nil
			}
		}
		closerSafe := func(fooTask *asyncio.Task[struct{}]) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				fooTask.Cancel()
				_, err := fooTask.Await(t)
				if asyncio.IsCancelled(err) {
					if t.Cancelling() > 0 {
						p.log("safe closer was itself cancelled: re-raise")
						return err
					}
				} else if err != nil {
					return err
				}
				p.log("safe closer finished normally")
				return nil
			}
		}

		for _, closer := range []func(*asyncio.Task[struct{}]) func(*asyncio.T) error{closerNaive, closerSafe} {
			p.restart()
			fooTask := asyncio.CreateTaskErr(tk, foo)
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
			c := asyncio.CreateTaskErr(tk, closer(fooTask))
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			p.log("main cancels the closer")
			c.Cancel()
			switch _, err := c.Await(tk); {
			case err == nil:
				p.log("closer returned; cancelled() %s", pb(c.Cancelled()))
			case asyncio.IsCancelled(err):
				p.log("closer cancelled() %s", pb(c.Cancelled()))
			default:
				return err
			}
			p.log("foo_task cancelled() %s done() %s", pb(fooTask.Cancelled()), pb(fooTask.Done()))
			if err := asyncio.Sleep(tk, 200*ms); err != nil {
				return err
			}
			p.log("foo_task cancelled() %s", pb(fooTask.Cancelled()))
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p248_lock_cancel_release.py

func TestPortLockCancelRelease(t *testing.T) {
	runPort(t, cpythonTrace("p248_lock_cancel_release"), func(p *probe, tk *asyncio.T) error {
		worker := func(name string, lock *asyncio.Lock) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				p.log("%s waiting", name)
				err := asyncio.WithLock(t, lock, func() error {
					p.log("%s holds the lock", name)
					if err := asyncio.Sleep(t, 200*ms); err != nil {
						return err
					}
					p.log("%s releases", name)
					return nil
				})
				if asyncio.IsCancelled(err) {
					p.log("%s cancelled; locked: %s", name, pb(lock.Locked()))
				}
				return err
			}
		}
		bare := func(name string, lock *asyncio.Lock) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := lock.Acquire(t); err != nil {
					return err
				}
				p.log("%s acquired (bare)", name)
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err // the lock stays held
				}
				if err := lock.Release(); err != nil {
					return err
				}
				p.log("%s released (bare)", name)
				return nil
			}
		}

		p.restart()
		lock := asyncio.NewLock()
		a := asyncio.CreateTaskErr(tk, worker("a", lock))
		b := asyncio.CreateTaskErr(tk, worker("b", lock))
		c := asyncio.CreateTaskErr(tk, worker("c", lock))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		a.Cancel()
		b.Cancel()
		if _, err := asyncio.GatherOutcomes(tk, a, b, c).Await(tk); err != nil {
			return err
		}
		p.log("states %s %s %s locked %s", pb(a.Cancelled()), pb(b.Cancelled()), pb(c.Cancelled()), pb(lock.Locked()))

		p.restart()
		task := asyncio.CreateTaskErr(tk, bare("x", lock))
		if err := asyncio.Sleep(tk, 100*ms); err != nil {
			return err
		}
		task.Cancel()
		if _, err := asyncio.GatherOutcomes(tk, task).Await(tk); err != nil {
			return err
		}
		p.log("bare task cancelled; locked: %s", pb(lock.Locked()))
		err := asyncio.Timeout(tk, 200*ms, func(*asyncio.TimeoutScope) error { return lock.Acquire(tk) })
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("nobody can take it now")
		} else {
			return fmt.Errorf("acquire: %v", err)
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p249_timeout_zero_prior_cancel.py

func TestPortTimeoutZeroPriorCancel(t *testing.T) {
	runPort(t, cpythonTrace("p249_timeout_zero_prior_cancel"), func(p *probe, tk *asyncio.T) error {
		type scope func(t *asyncio.T, body func(*asyncio.TimeoutScope) error) error
		test := func(cm scope) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				t.Cancel()
				err := cm(t, func(*asyncio.TimeoutScope) error { return asyncio.Sleep(t, 100*ms) })
				switch {
				case errors.Is(err, asyncio.ErrTimeout):
					p.log("timeout caught; cancelling() %d", t.Cancelling())
				case asyncio.IsCancelled(err):
					p.log("CancelledError caught; cancelling() %d", t.Cancelling())
					return err
				case err != nil:
					return err
				}
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				p.log("not cancelled")
				return nil
			}
		}
		loop := tk.Loop()
		variants := []struct {
			name string
			cm   scope
		}{
			{"timeout(0)", func(t *asyncio.T, body func(*asyncio.TimeoutScope) error) error {
				return asyncio.Timeout(t, 0, body)
			}},
			{"timeout(0.001)", func(t *asyncio.T, body func(*asyncio.TimeoutScope) error) error {
				return asyncio.Timeout(t, time.Millisecond, body)
			}},
			{"timeout_at(past)", func(t *asyncio.T, body func(*asyncio.TimeoutScope) error) error {
				return asyncio.TimeoutAt(t, loop.Time()-time.Second, body)
			}},
			{"timeout(None)", func(t *asyncio.T, body func(*asyncio.TimeoutScope) error) error {
				return asyncio.TimeoutAt(t, asyncio.Never, body)
			}},
		}
		for _, v := range variants {
			p.restart()
			p.log("%s", v.name)
			task := asyncio.CreateTaskErr(tk, test(v.cm))
			switch _, err := task.Await(tk); {
			case err == nil:
				p.log("%s task ended normally", v.name)
			case asyncio.IsCancelled(err):
				p.log("%s task cancelled() %s", v.name, pb(task.Cancelled()))
			default:
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p250_semaphore_leak.py

func TestPortSemaphoreLeak(t *testing.T) {
	runPort(t, cpythonTrace("p250_semaphore_leak"), func(p *probe, tk *asyncio.T) error {
		fails := func(i int) bool { return i == 1 || i == 2 }
		faultyTask := func(i int, sem *asyncio.Semaphore) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := sem.Acquire(t); err != nil {
					return err
				}
				p.log("faulty %d acquired", i)
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return err
				}
				if fails(i) {
					return newValueError(fmt.Sprintf("task %d failed", i))
				}
				if err := sem.Release(); err != nil {
					return err
				}
				p.log("faulty %d released", i)
				return nil
			}
		}
		safeTask := func(i int, sem *asyncio.Semaphore) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				err := asyncio.WithLock(t, sem, func() error {
					p.log("safe %d acquired", i)
					if err := asyncio.Sleep(t, 200*ms); err != nil {
						return err
					}
					if fails(i) {
						return newValueError(fmt.Sprintf("task %d failed", i))
					}
					return nil
				})
				if err != nil {
					return noValue, err
				}
				p.log("safe %d released", i)
				return noValue, nil
			}
		}

		p.restart()
		sem := asyncio.NewSemaphore(2)
		var tasks []*asyncio.Task[struct{}]
		for i := range 3 {
			tasks = append(tasks, asyncio.CreateTaskErr(tk, faultyTask(i, sem)))
		}
		late := asyncio.CreateTaskErr(tk, faultyTask(3, sem))
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("first three %s", pdStrs(res))
		if _, err := asyncio.WaitFor(tk, 300*ms, late); errors.Is(err, asyncio.ErrTimeout) {
			p.log("task 3 never got a permit; locked %s", pb(sem.Locked()))
		} else {
			return fmt.Errorf("late: %v", err)
		}

		p.restart()
		label := "async with"
		sem = asyncio.NewSemaphore(2)
		var fns []func(*asyncio.T) (struct{}, error)
		for i := range 4 {
			fns = append(fns, safeTask(i, sem))
		}
		res, err = asyncio.GatherOutcomesFuncs(tk, fns...).Await(tk)
		if err != nil {
			return err
		}
		p.log("%s results %s locked %s", label, pdStrs(res), pb(sem.Locked()))
		_, err = asyncio.WaitForFunc(tk, 300*ms, func(t *asyncio.T) (struct{}, error) { return noValue, sem.Acquire(t) })
		switch {
		case err == nil:
			p.log("%s a new acquire got a permit", label)
			if err := sem.Release(); err != nil {
				return err
			}
		case errors.Is(err, asyncio.ErrTimeout):
			p.log("%s a new acquire waits forever", label)
		default:
			return err
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p251_taskgroup_fail_fast.py

func TestPortTaskGroupFailFast(t *testing.T) {
	runPort(t, cpythonTrace("p251_taskgroup_fail_fast"), func(p *probe, tk *asyncio.T) error {
		a := func(t *asyncio.T) error {
			err := asyncio.Sleep(t, 300*ms)
			if err == nil {
				p.log("a done")
			} else if asyncio.IsCancelled(err) {
				p.log("a cancelled")
			}
			return err
		}
		b := func(t *asyncio.T) error {
			if err := asyncio.Sleep(t, 100*ms); err != nil {
				return err
			}
			p.log("b fails")
			return newValueError("b failed")
		}
		c := func(t *asyncio.T) error {
			err := asyncio.Sleep(t, 500*ms)
			if asyncio.IsCancelled(err) {
				p.log("c cleanup")
				if err := asyncio.Sleep(t, 40*ms); err != nil {
					return err
				}
				return newKeyError("c cleanup failed")
			}
			return err
		}

		p.restart()
		var ta, tc *asyncio.Task[struct{}]
		err := asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			var err error
			if ta, err = asyncio.SpawnErr(g, a); err != nil {
				return err
			}
			if _, err = asyncio.SpawnErr(g, b); err != nil {
				return err
			}
			if tc, err = asyncio.SpawnErr(g, c); err != nil {
				return err
			}
			err = asyncio.Sleep(tk, time.Second)
			if asyncio.IsCancelled(err) {
				p.log("group body cancelled")
			}
			return err
		})
		err = asyncio.ExceptStar(err,
			asyncio.Except[*valueError](func(eg *asyncio.ExceptionGroup) error {
				p.log("caught %s", pd(eg))
				return nil
			}),
			asyncio.Except[*keyError](func(eg *asyncio.ExceptionGroup) error {
				p.log("also %s", pd(eg))
				return nil
			}))
		if err != nil {
			return err
		}
		p.log("a cancelled() %s c exception %s", pb(ta.Cancelled()), pd(tc.Err()))

		p.restart()
		tasks := []*asyncio.Task[struct{}]{asyncio.CreateTaskErr(tk, a), asyncio.CreateTaskErr(tk, b)}
		_, err = asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		var ve *valueError
		if !errors.As(err, &ve) {
			return fmt.Errorf("gather: %v", err)
		}
		p.log("first failure %s", pd(err))
		for _, t := range tasks {
			t.Cancel()
		}
		res, err := asyncio.GatherOutcomes(tk, asyncio.Awaitables(tasks)...).Await(tk)
		if err != nil {
			return err
		}
		p.log("outcomes %s", pdStrs(res))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p252_event_clear_after_wake.py

func TestPortEventClearAfterWake(t *testing.T) {
	runPort(t, cpythonTrace("p252_event_clear_after_wake"), func(p *probe, tk *asyncio.T) error {
		waiter := func(t *asyncio.T, event *asyncio.Event, name string) error {
			p.log("Task %s: Waiting for signal...", name)
			if err := event.Wait(t); err != nil {
				return err
			}
			p.log("Task %s: Signal received! is_set %s", name, pb(event.IsSet()))
			event.Clear() // Clear for future use
			return nil
		}
		setter := func(event *asyncio.Event, delay time.Duration) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				p.log("Setter: Sleeping for %g seconds...", delay.Seconds())
				if err := asyncio.Sleep(t, delay); err != nil {
					return noValue, err
				}
				p.log("Setter: Setting the event!")
				event.Set()
				return noValue, nil
			}
		}
		late := func(event *asyncio.Event) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, 200*ms); err != nil {
					return noValue, err
				}
				err := asyncio.Timeout(t, 200*ms, func(*asyncio.TimeoutScope) error {
					return waiter(t, event, "C")
				})
				if errors.Is(err, asyncio.ErrTimeout) {
					p.log("Task C: no signal, the event was cleared")
					return noValue, nil
				}
				return noValue, err
			}
		}
		waiterFn := func(event *asyncio.Event, name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) { return noValue, waiter(t, event, name) }
		}

		p.restart()
		event := asyncio.NewEvent()
		if _, err := asyncio.GatherFuncs(tk, waiterFn(event, "A"), waiterFn(event, "B"), setter(event, 100*ms), late(event)).Await(tk); err != nil {
			return err
		}

		p.restart()
		ev := asyncio.NewEvent()
		w := asyncio.CreateTask(tk, func(t *asyncio.T) (bool, error) {
			if err := ev.Wait(t); err != nil {
				return false, err
			}
			return true, nil // wait() returns True
		})
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		ev.Set()
		ev.Clear()
		p.log("set then clear; is_set %s", pb(ev.IsSet()))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		r, err := w.Result()
		if err != nil {
			return err
		}
		p.log("the waiter woke anyway: %s %s", pb(w.Done()), pb(r))
		return nil
	})
}
