package asyncio

// Synchronisation primitives, queues, Wait/AsCompleted and WaitFor with
// a *T that is not the running task.

import (
	"errors"
	"fmt"
	"testing"
)

// Awaiting a lock, semaphore, event, condition, barrier or queue with a
// *T that is not the running task (a callback holding a task's handle) is
// misuse, and misuse panics before any state changes (the limiter's rule,
// h17). These checked only the goroutine: they queued a waiter (or, for a
// Condition, released its lock; for a Barrier, counted a party) and only
// then did the await panic. The waiter, awaited by nobody, then took what
// it was handed: a Semaphore stayed acquired for ever, a Queue item was
// lost. Each misuse now panics with the *RuntimeError and leaves the
// primitive as it was (its repr is unchanged).
func TestAwaitWithATaskNotRunningChangesNothing(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		lk := NewLock()
		if err := lk.Acquire(tk); err != nil {
			return err
		}
		sem := NewSemaphore(0)
		ev := NewEvent()
		cond := NewCondition(nil)
		if err := cond.Acquire(tk); err != nil {
			return err
		}
		bar := NewBarrier(2)
		empty, full := NewQueue[int](1), NewQueue[int](1)
		if err := full.PutNowait(7); err != nil {
			return err
		}
		fut := NewFuture[int](tk.Loop())
		tasks := stringerFunc(func() string { return fmt.Sprintf("%d tasks", len(AllTasks(tk.Loop()))) })
		// parked is a task suspended in a Sleep: its t is not running
		// while the callbacks below run.
		var parked *T
		release := NewFuture[struct{}](tk.Loop())
		holder := CreateTask(tk, func(t *T) (struct{}, error) {
			parked = t
			_, err := release.Await(t)
			return struct{}{}, err
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		for _, c := range []struct {
			what  string
			state fmt.Stringer
			call  func()
		}{
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Lock.Acquire", lk, func() { _ = lk.Acquire(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Semaphore.Acquire", sem, func() { _ = sem.Acquire(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Event.Wait", ev, func() { _ = ev.Wait(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Condition.Wait", cond, func() { _ = cond.Wait(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Condition.WaitFor", cond, func() { _ = cond.WaitFor(parked, func() bool { return false }) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Barrier.Wait", bar, func() { _, _ = bar.Wait(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Queue.Get", empty, func() { _, _ = empty.Get(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Queue.Put", full, func() { _ = full.Put(parked, 8) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Queue.Join", full, func() { _ = full.Join(parked) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"Wait", fut, func() { _, _, _ = Wait(parked, []*Future[int]{fut}, Never, AllCompleted) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"WaitFor", fut, func() { _, _ = WaitFor[int](parked, 0, fut) }},
			//asynciovet:ignore droppedcancel the call must panic (misuse under test): it returns no error
			{"WaitForFunc", tasks, func() { _, _ = WaitForFunc(parked, 0, func(*T) (int, error) { return 1, nil }) }},
		} {
			before := c.state.String()
			done := NewFuture[struct{}](tk.Loop())
			tk.Loop().CallSoon(func() {
				defer func() {
					var re *RuntimeError
					if err, _ := recover().(error); !errors.As(err, &re) {
						r.log("%s: no *RuntimeError panic (%v)", c.what, err)
					} else if after := c.state.String(); after != before {
						r.log("%s: panicked, but %s became %s", c.what, before, after)
					} else {
						r.log("%s: panicked, nothing changed", c.what)
					}
					_ = done.SetResult(struct{}{})
				}()
				c.call()
			})
			if _, err := done.Await(tk); err != nil {
				return err
			}
		}
		// Each primitive still serves the running task as before.
		if err := sem.Release(); err != nil {
			return err
		}
		if err := sem.Acquire(tk); err != nil {
			return err
		}
		if err := empty.PutNowait(1); err != nil {
			return err
		}
		v, err := empty.Get(tk)
		r.log("semaphore acquired; queue item %d", v)
		_ = release.SetResult(struct{}{})
		if _, herr := holder.Await(tk); herr != nil {
			return herr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, what := range []string{"Lock.Acquire", "Semaphore.Acquire", "Event.Wait", "Condition.Wait",
		"Condition.WaitFor", "Barrier.Wait", "Queue.Get", "Queue.Put", "Queue.Join", "Wait", "WaitFor", "WaitForFunc"} {
		want = append(want, "0s "+what+": panicked, nothing changed")
	}
	checkEvents(t, append(want, "0s semaphore acquired; queue item 1"), r)
}

// stringerFunc is a fmt.Stringer made of a func.
type stringerFunc func() string

func (f stringerFunc) String() string { return f() }

// contextvars' set and reset change only the current context, so
// ContextVar.Set and Reset with a task that is not the running one are
// misuse: they panic with a *RuntimeError and the task's value stays. Set
// wrote into the parked task's context, which it then read after its
// await as if it had set the value itself.
func TestContextVarSetOnATaskNotRunningChangesNothing(t *testing.T) {
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		v := NewContextVar("v", "default")
		release := NewFuture[struct{}](tk.Loop())
		var parked *T
		var tok *ContextVarToken[string]
		holder := CreateTask(tk, func(t *T) (string, error) {
			parked = t
			tok = v.Set(t, "own")
			if _, err := release.Await(t); err != nil {
				return "", err
			}
			return v.Get(t), nil
		})
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		for _, c := range []struct {
			what string
			call func()
		}{
			{"Set", func() { v.Set(parked, "intruder") }},
			{"Reset", func() { _ = v.Reset(parked, tok) }},
		} {
			func() {
				defer func() {
					var re *RuntimeError
					if err, _ := recover().(error); !errors.As(err, &re) {
						r.log("%s: no *RuntimeError panic (%v)", c.what, err)
					} else {
						r.log("%s: panicked", c.what)
					}
				}()
				c.call()
			}()
		}
		_ = release.SetResult(struct{}{})
		got, err := holder.Await(tk)
		r.log("parked task reads %q; main reads %q", got, v.Get(tk))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s Set: panicked", "0s Reset: panicked", `0s parked task reads "own"; main reads "default"`}, r)
}
