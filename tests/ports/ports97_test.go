//go:build unix

package ports_test

// Ports p97 onward (h30): loop exception handler reports, timer ordering,
// threads with context variables, async generators as iterators,
// as_completed, subprocess build tools, line-protocol servers on aio's
// simulated network, idle timeouts with reschedule, a token bucket on
// call_at. Same conventions as ports_test.go, ports50_test.go (network)
// and ports70_test.go (children).

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// pexc is d(ctx.get("exception")): a panic that escaped a callback is
// the Python exception it raised.
func pexc(err error) string {
	var pe *asyncio.PanicError
	if errors.As(err, &pe) {
		if e, ok := pe.Value.(error); ok {
			return pd(e)
		}
		return fmt.Sprint(pe.Value)
	}
	return pd(err)
}

// pstrList is repr() of a list of str.
func pstrList(ss []string) string { return pstrs(ss) }

// ---------------------------------------------------------------------------
// p97_exception_handler_reports.py

func TestPortExceptionHandlerReports(t *testing.T) {
	runPort(t, cpythonTrace("p97_exception_handler_reports"), func(p *probe, tk *asyncio.T) error {
		loop := tk.Loop()
		var reports []string
		loop.SetExceptionHandler(func(_ *asyncio.Loop, ctx asyncio.ExceptionContext) {
			msg := ctx.Message
			if strings.HasPrefix(msg, "Exception in callback") {
				msg = "Exception in callback"
			}
			// docs/rules.md FUT-10: Go's message adds the task's name.
			if strings.HasPrefix(msg, "Task exception was never retrieved") {
				msg = "Task exception was never retrieved"
			}
			reports = append(reports, msg)
			if msg == "explode" {
				panic(&runtimeError{pyExc{"RuntimeError", "handler bug"}})
			}
			handle := "-"
			if ctx.Handle != nil {
				handle = "handle"
			}
			p.log("handler: %s %s %s", msg, pexc(ctx.Err), handle)
		})
		failingJob := func(name string) func(*asyncio.T) (struct{}, error) {
			return func(t *asyncio.T) (struct{}, error) {
				if err := asyncio.Sleep(t, 100*ms); err != nil {
					return noValue, err
				}
				p.log("%s fails", name)
				return noValue, newKeyError(name)
			}
		}
		p.restart()
		var order []string
		step := func(name string) func() {
			return func() {
				order = append(order, name)
				if name == "bad" {
					panic(newValueError("bad step"))
				}
			}
		}
		for _, name := range []string{"first", "bad", "third"} {
			loop.CallSoon(step(name))
		}
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("callbacks ran %s", pstrList(order))

		loop.CallLater(100*ms, func() {
			p.log("tick")
			panic(&pyExc{"ZeroDivisionError", "tick"})
		})
		loop.CallLater(200*ms, step("after-tick"))
		if err := asyncio.Sleep(tk, 300*ms); err != nil {
			return err
		}
		p.log("after timers %s", pstrList(order))

		fut := asyncio.NewFuture[string](tk)
		fut.AddDoneCallback(func() {
			v, _ := fut.Result()
			p.log("done callback 1 sees %s", v)
			panic(newTypeError("callback bug"))
		})
		fut.AddDoneCallback(func() {
			v, _ := fut.Result()
			p.log("done callback 2 sees %s", v)
		})
		if err := fut.SetResult("ready"); err != nil {
			return err
		}
		p.log("result set")
		for range 2 {
			if err := asyncio.Sleep(tk, 0); err != nil {
				return err
			}
		}

		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "custom report", Err: &pyExc{"OSError", "disk full"}})
		loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "explode"})
		p.log("handler raised, loop goes on")
		loop.CallSoon(step("after-explode"))
		if err := asyncio.Sleep(tk, 0); err != nil {
			return err
		}
		p.log("order %s", pstrList(order))

		p.restart()
		jobs := []*asyncio.Task[struct{}]{asyncio.CreateTask(tk, failingJob("orphan"))}
		ok := asyncio.CreateTask(tk, func(t *asyncio.T) (string, error) {
			return "fine", asyncio.Sleep(t, 60*ms)
		})
		v, err := ok.Await(tk)
		if err != nil {
			return err
		}
		p.log("ok result %s", v)
		if err := asyncio.Sleep(tk, 200*ms); err != nil {
			return err
		}
		p.log("orphan done %s reports so far %d", pb(jobs[0].Done()), len(reports))
		jobs = nil
		_ = jobs
		return nil
	})
}

var _ = time.Second
