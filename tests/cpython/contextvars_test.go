package cpython

// The contextvars tests of test_tasks.py, test_taskgroups.py,
// test_runners.py and test_eager_task_factory.py: ContextVar,
// NewContextVarNoDefault (a variable without a default), VarContext
// (contextvars.Context), WithVarContext (create_task(context=)) and
// T.VarContext (get_context()).

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

func TestTasks_test_context_1(t *testing.T) {
	cvar := asyncio.NewContextVar("cvar", "nope")
	run(t, func(tk *asyncio.T) error {
		eq(t, cvar.Get(tk), "nope")
		subtask := asyncio.CreateTask(tk, fn0(func(st *asyncio.T) error {
			if err := asyncio.Sleep(st, 10*ms); err != nil {
				return err
			}
			eq(t, cvar.Get(st), "nope", "sub sees the context main had when it created it")
			cvar.Set(st, "something else")
			return nil
		}))
		cvar.Set(tk, "yes")
		eq(t, cvar.Get(tk), "yes")
		_, err := subtask.Await(tk)
		noErr(t, err)
		eq(t, cvar.Get(tk), "yes", "sub's Set does not reach main")
		return nil
	})
}

func TestTasks_test_context_2(t *testing.T) {
	// The done callback of CPython's test sets cvar in the context it was
	// added from, which must not reach main's. Go callbacks run in no
	// context (CTX-1): the callback has no task to Set in, so it cannot
	// pollute main by construction; what is left is checked: main's value
	// survives each await of the future and each sleep.
	cvar := asyncio.NewContextVar("cvar", "nope")
	run(t, func(tk *asyncio.T) error {
		eq(t, cvar.Get(tk), "nope")
		for j := range 2 {
			fut := asyncio.NewFuture[struct{}](tk)
			ran := false
			fut.AddDoneCallback(func() { ran = true })
			cvar.Set(tk, "yes"+itoa(j))
			tk.Loop().CallSoon(func() { fut.SetResult(struct{}{}) })
			_, err := fut.Await(tk)
			noErr(t, err)
			eq(t, cvar.Get(tk), "yes"+itoa(j))
			for i := range 3 {
				cvar.Set(tk, "yes"+itoa(i)+"-"+itoa(j))
				noErr(t, asyncio.Sleep(tk, ms))
				eq(t, cvar.Get(tk), "yes"+itoa(i)+"-"+itoa(j))
			}
			check(t, ran, "the done callback ran")
		}
		return nil
	})
}

func TestTasks_test_context_3(t *testing.T) {
	// 100 tasks in parallel, each setting cvar and reading it back after a
	// random sleep (random on the virtual clock, seeded for repeatability).
	cvar := asyncio.NewContextVar("cvar", -1)
	rng := rand.New(rand.NewPCG(3, 3))
	run(t, func(tk *asyncio.T) error {
		var tasks []*asyncio.Task[struct{}]
		for range 100 {
			num := rng.IntN(11)
			tasks = append(tasks, asyncio.CreateTask(tk, fn0(func(st *asyncio.T) error {
				for i := range 10 {
					cvar.Set(st, num+i)
					d := ms + time.Duration(rng.Int64N(int64(49*ms)))
					if err := asyncio.Sleep(st, d); err != nil {
						return err
					}
					eq(t, cvar.Get(st), num+i)
				}
				return nil
			})))
		}
		_, err := asyncio.Gather(tk, asyncio.Awaitables(tasks)...).Await(tk)
		noErr(t, err)
		eq(t, cvar.Get(tk), -1, "main's value")
		return nil
	})
}

// contextCoro is coro(val) of test_context_4..6: sleep(0), then set.
func contextCoro(cvar *asyncio.ContextVar[int], val int) func(*asyncio.T) (struct{}, error) {
	return fn0(func(st *asyncio.T) error {
		if err := asyncio.Sleep(st, 0); err != nil {
			return err
		}
		cvar.Set(st, val)
		return nil
	})
}

// getOr is ctx.get(cvar) with None as -1.
func getOr(cvar *asyncio.ContextVar[int], c *asyncio.VarContext) int {
	v, ok := cvar.LookupValue(c.Context())
	if !ok {
		return -1
	}
	return v
}

// contextTasks is the body of test_context_4..6, with create making the
// task in the given context (the three tests differ only in which
// create_task they call).
func contextTasks(t *testing.T, create func(tk *asyncio.T, fn func(*asyncio.T) (struct{}, error), c *asyncio.VarContext) *asyncio.Task[struct{}]) {
	cvar := asyncio.NewContextVarNoDefault[int]("cvar")
	run(t, func(tk *asyncio.T) error {
		var ret []int
		ctx := asyncio.CopyContext(tk)
		ret = append(ret, getOr(cvar, ctx))
		_, err := create(tk, contextCoro(cvar, 1), ctx).Await(tk)
		noErr(t, err)
		ret = append(ret, getOr(cvar, ctx))
		_, err = create(tk, contextCoro(cvar, 2), ctx).Await(tk)
		noErr(t, err)
		ret = append(ret, getOr(cvar, ctx))
		eq(t, ret, []int{-1, 1, 2}, "[None, 1, 2]")
		_, ok := cvar.Lookup(tk)
		check(t, !ok, "main's own context is untouched")
		return nil
	})
}

func TestTasks_test_context_4(t *testing.T) {
	// self.new_task(loop, coro, context=ctx): the Task constructor.
	contextTasks(t, func(tk *asyncio.T, fn func(*asyncio.T) (struct{}, error), c *asyncio.VarContext) *asyncio.Task[struct{}] {
		return asyncio.CreateTask(tk.Loop(), fn, asyncio.WithVarContext(c))
	})
}

func TestTasks_test_context_5(t *testing.T) {
	// asyncio.create_task(coro, context=ctx).
	contextTasks(t, func(tk *asyncio.T, fn func(*asyncio.T) (struct{}, error), c *asyncio.VarContext) *asyncio.Task[struct{}] {
		return asyncio.CreateTask(tk, fn, asyncio.WithVarContext(c))
	})
}

func TestTasks_test_context_6(t *testing.T) {
	// loop.create_task(coro, context=ctx).
	contextTasks(t, func(tk *asyncio.T, fn func(*asyncio.T) (struct{}, error), c *asyncio.VarContext) *asyncio.Task[struct{}] {
		return asyncio.CreateTask(asyncio.CurrentTask(tk).Loop(), fn, asyncio.WithVarContext(c))
	})
}

func TestTasks_test_get_context(t *testing.T) {
	run(t, func(tk *asyncio.T) error {
		ctx := asyncio.CopyContext(tk)
		task := asyncio.CreateTask(tk, sleepFn(0), asyncio.WithVarContext(ctx))
		_, err := task.Await(tk)
		noErr(t, err)
		check(t, task.T().VarContext() == ctx, "task.get_context() is context")
		return nil
	})
}

func TestTaskGroups_test_taskgroup_task_context(t *testing.T) {
	cvar := asyncio.NewContextVarNoDefault[int]("cvar")
	run(t, func(tk *asyncio.T) error {
		return asyncio.TaskGroup(tk, func(g *asyncio.Group) error {
			ctx := asyncio.CopyContext(tk)
			_, ok := cvar.LookupValue(ctx.Context())
			check(t, !ok, "ctx.get(cvar) is None")
			_, err := spawn(t, g, contextCoro(cvar, 1), asyncio.WithVarContext(ctx)).Await(tk)
			noErr(t, err)
			eq(t, getOr(cvar, ctx), 1)
			_, err = spawn(t, g, contextCoro(cvar, 2), asyncio.WithVarContext(ctx)).Await(tk)
			noErr(t, err)
			eq(t, getOr(cvar, ctx), 2)
			return nil
		})
	})
}

func TestRunners_test_run_keeps_context(t *testing.T) {
	cvar := asyncio.NewContextVar("cvar", -1)
	f := func(val int) func(*asyncio.T) (int, error) {
		return func(tk *asyncio.T) (int, error) {
			old := cvar.Get(tk)
			if err := asyncio.Sleep(tk, 0); err != nil {
				return 0, err
			}
			cvar.Set(tk, val)
			return old, nil
		}
	}
	r := asyncio.NewRunner(asyncio.WithVirtualTime())
	defer r.Close()
	v, err := asyncio.RunWith(r, f(1))
	noErr(t, err)
	eq(t, v, -1)
	v, err = asyncio.RunWith(r, f(2))
	noErr(t, err)
	eq(t, v, 1)
	ctx, err := asyncio.RunWith(r, func(tk *asyncio.T) (*asyncio.VarContext, error) { return asyncio.CopyContext(tk), nil })
	noErr(t, err)
	eq(t, cvar.Value(ctx.Context()), 2, "runner.run(get_context()).get(cvar)")
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestFutures2_test_task_exc_handler_correct_context(t *testing.T) {
	// CPython reports the error nobody retrieved when the task is
	// collected, right after it fails; here at the latest when the loop
	// closes (FUT-10). The exception handler sees the failed task's
	// values: asyncio runs it in the task's context, Go hands the
	// handler that context as ExceptionContext.Context.
	name := asyncio.NewContextVar("name", "foo")
	called := false
	l := asyncio.NewTestLoop()
	l.SetExceptionHandler(func(_ *asyncio.Loop, c asyncio.ExceptionContext) {
		eq(t, name.Value(c.Context), "bar", "name.get() in the handler")
		called = true
	})
	main := asyncio.CreateTask(l, fn0(func(tk *asyncio.T) error {
		asyncio.CreateTask(tk, fn0(func(st *asyncio.T) error {
			name.Set(st, "bar")
			return exc("ZeroDivisionError")
		}))
		return asyncio.Sleep(tk, 0)
	}))
	noErr(t, l.RunUntilComplete(main))
	noErr(t, l.Close())
	check(t, called, "exc_handler_called")
}
