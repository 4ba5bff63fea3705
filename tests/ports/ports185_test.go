//go:build unix

package ports_test

// Ports p185 onward (h40): the example programs of CPython 3.13's asyncio
// documentation, ported line for line as a newcomer would (what the docs
// show is what gets tried first). Each testdata/pNNN_doc_*.py says which
// page it comes from; the delays are scaled down and the wall-clock
// prints (time.strftime, datetime.now) are loop-time offsets. Same
// conventions as ports_test.go.

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// ---------------------------------------------------------------------------
// p185_doc_say_after.py (asyncio-task.rst, Coroutines)

func TestPortDocSayAfter(t *testing.T) {
	runPort(t, cpythonTrace("p185_doc_say_after"), func(p *probe, tk *asyncio.T) error {
		sayAfter := func(delay time.Duration, what string) func(*asyncio.T) error {
			return func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, delay); err != nil {
					return err
				}
				p.log("%s", what)
				return nil
			}
		}

		p.restart()
		p.log("started at")
		if err := sayAfter(100*ms, "hello")(tk); err != nil {
			return err
		}
		if err := sayAfter(200*ms, "world")(tk); err != nil {
			return err
		}
		p.log("finished at")

		p.restart()
		task1 := asyncio.CreateTaskErr(tk, sayAfter(100*ms, "hello"))
		task2 := asyncio.CreateTaskErr(tk, sayAfter(200*ms, "world"))
		p.log("started at")
		if _, err := task1.Await(tk); err != nil {
			return err
		}
		if _, err := task2.Await(tk); err != nil {
			return err
		}
		p.log("finished at")

		p.restart()
		err := asyncio.TaskGroup(tk, func(tg *asyncio.Group) error {
			if _, err := asyncio.SpawnErr(tg, sayAfter(100*ms, "hello")); err != nil {
				return err
			}
			if _, err := asyncio.SpawnErr(tg, sayAfter(200*ms, "world")); err != nil {
				return err
			}
			p.log("started at")
			return nil
		})
		if err != nil {
			return err
		}
		p.log("finished at")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p186_doc_display_date.py (asyncio-task.rst, Sleeping)

func TestPortDocDisplayDate(t *testing.T) {
	runPort(t, cpythonTrace("p186_doc_display_date"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		p.restart()
		endTime := loop.Time() + 500*ms
		for {
			p.log("now")
			if loop.Time()+100*ms >= endTime {
				break
			}
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---------------------------------------------------------------------------
// p187_doc_gather_factorial.py (asyncio-task.rst, Running Tasks Concurrently)

func TestPortDocGatherFactorial(t *testing.T) {
	runPort(t, cpythonTrace("p187_doc_gather_factorial"), func(p *probe, tk *asyncio.T) error {
		factorial := func(name string, number int) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				f := 1
				for i := 2; i <= number; i++ {
					p.log("Task %s: Compute factorial(%d), currently i=%d...", name, number, i)
					if err := asyncio.Sleep(t, 100*ms); err != nil {
						return 0, err
					}
					f *= i
				}
				p.log("Task %s: factorial(%d) = %d", name, number, f)
				return f, nil
			}
		}
		fails := func(name string, after time.Duration) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, after); err != nil {
					return 0, err
				}
				p.log("Task %s: raising", name)
				return 0, newValueError(name)
			}
		}
		ints := func(l []int) string { return strings.ReplaceAll(fmt.Sprint(l), " ", ", ") }

		p.restart()
		L, err := asyncio.GatherFuncs(tk, factorial("A", 2), factorial("B", 3), factorial("C", 4)).Await(tk)
		if err != nil {
			return err
		}
		p.log("%s", ints(L))

		p.restart()
		// gather(*coros, return_exceptions=True): there is no
		// GatherOutcomesFuncs, so each coroutine becomes a task first.
		outs, err := asyncio.GatherOutcomes[int](tk,
			asyncio.CreateTask(tk, factorial("A", 2)),
			asyncio.CreateTask(tk, fails("F", 160*ms)),
			asyncio.CreateTask(tk, factorial("C", 3)),
		).Await(tk)
		if err != nil {
			return err
		}
		var parts []string
		for _, o := range outs {
			if o.Err != nil {
				parts = append(parts, "'"+pd(o.Err)+"'")
			} else {
				parts = append(parts, fmt.Sprint(o.Value))
			}
		}
		p.log("[%s]", strings.Join(parts, ", "))

		p.restart()
		_, err = asyncio.GatherFuncs(tk, factorial("A", 3), fails("F", 160*ms)).Await(tk)
		if ve := (*valueError)(nil); errors.As(err, &ve) {
			p.log("gather raised %s", pd(err))
		} else {
			return fmt.Errorf("gather: %v, want the ValueError", err)
		}
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("A was not cancelled: it finished on its own")
		return nil
	})
}

// ---------------------------------------------------------------------------
// p188_doc_shield.py (asyncio-task.rst, Shielding From Cancellation)

func TestPortDocShield(t *testing.T) {
	runPort(t, cpythonTrace("p188_doc_shield"), func(p *probe, tk *asyncio.T) error {
		backgroundTasks := map[*asyncio.Task[string]]bool{}
		something := func(t *asyncio.T) (string, error) {
			p.log("something starts")
			if err := asyncio.Sleep(t, 300*ms); err != nil {
				return "", err
			}
			p.log("something finishes")
			return "result", nil
		}
		caller := func(t *asyncio.T) error {
			res, err := asyncio.Shield(asyncio.CreateTask(t, something)).Await(t)
			if err != nil {
				return err
			}
			p.log("caller got %s", res)
			return nil
		}
		callerWithTask := func(t *asyncio.T) error {
			task := asyncio.CreateTask(t, something)
			backgroundTasks[task] = true
			task.AddDoneCallback(func() { delete(backgroundTasks, task) })
			res, err := asyncio.Shield(task).Await(t)
			if asyncio.IsCancelled(err) {
				p.log("caller cancelled, task done %s kept %s", pb(task.Done()), pb(backgroundTasks[task]))
				return err
			}
			if err != nil {
				return err
			}
			p.log("caller got %s", res)
			return nil
		}
		cancelAndAwait := func(outer *asyncio.Task[struct{}]) error {
			if err := asyncio.Sleep(tk, 100*ms); err != nil {
				return err
			}
			outer.Cancel()
			_, err := outer.Await(tk)
			if !asyncio.IsCancelled(err) {
				return fmt.Errorf("outer: %v, want a cancellation", err)
			}
			p.log("outer %s", pd(err))
			return nil
		}

		p.restart()
		if err := cancelAndAwait(asyncio.CreateTaskErr(tk, caller)); err != nil {
			return err
		}
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}

		p.restart()
		if err := cancelAndAwait(asyncio.CreateTaskErr(tk, callerWithTask)); err != nil {
			return err
		}
		p.log("background tasks %d", len(backgroundTasks))
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("background tasks %d", len(backgroundTasks))

		p.restart()
		outer := asyncio.CreateTaskErr(tk, caller)
		if err := asyncio.Sleep(tk, 400*ms); err != nil {
			return err
		}
		p.log("uncancelled caller done %s", pb(outer.Done()))
		return nil
	})
}

// ---------------------------------------------------------------------------
// p189_doc_timeouts.py (asyncio-task.rst, Timeouts)

func TestPortDocTimeouts(t *testing.T) {
	runPort(t, cpythonTrace("p189_doc_timeouts"), func(p *probe, tk *asyncio.T) error {
		longRunningTask := func(t *asyncio.T) error { return asyncio.Sleep(t, time.Hour) }
		eternity := func(t *asyncio.T) (struct{}, error) {
			if err := asyncio.Sleep(t, time.Hour); err != nil {
				return noValue, err
			}
			p.log("yay!")
			return noValue, nil
		}

		p.restart()
		err := asyncio.Timeout(tk, 100*ms, func(*asyncio.TimeoutScope) error {
			return longRunningTask(tk)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("The long operation timed out, but we've handled it.")
		} else if err != nil {
			return err
		}
		p.log("This statement will run regardless.")

		p.restart()
		var cm *asyncio.TimeoutScope
		err = asyncio.Timeout(tk, asyncio.Never, func(s *asyncio.TimeoutScope) error {
			cm = s
			p.log("when %s", p.rel(cm.When()))
			newDeadline := tk.Loop().Time() + 100*ms
			if err := cm.Reschedule(newDeadline); err != nil {
				return err
			}
			p.log("when %s", p.rel(cm.When()))
			return longRunningTask(tk)
		})
		if err != nil && !errors.Is(err, asyncio.ErrTimeout) {
			return err
		}
		if cm.Expired() {
			p.log("Looks like we haven't finished on time.")
		}

		p.restart()
		loop := tk.Loop()
		deadline := loop.Time() + 200*ms
		err = asyncio.TimeoutAt(tk, deadline, func(*asyncio.TimeoutScope) error {
			return longRunningTask(tk)
		})
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("The long operation timed out, but we've handled it.")
		} else if err != nil {
			return err
		}
		p.log("This statement will run regardless.")

		p.restart()
		_, err = asyncio.WaitForFunc(tk, 100*ms, eternity)
		if errors.Is(err, asyncio.ErrTimeout) {
			p.log("timeout!")
		} else if err != nil {
			return err
		}
		return nil
	})
}
