package asyncio

import (
	"context"
	"errors"
	"testing"
)

// ctxKey is a context key for the tests' own values.
type ctxKey string

// CTX-2: a task starts with a copy of its creator's context, taken at
// creation: the child sees the creator's values of that moment; later Sets
// in the creator are invisible to the child and vice versa; values survive
// the task's own awaits.
func TestCTX2_CopyOnCreate(t *testing.T) {
	v := NewContextVar("v", "default")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		r.log("main before set: %s", v.Get(tk))
		v.Set(tk, "main-1")
		first := startTask(tk, "first", func(c *T) error {
			r.log("first sees %s", v.Get(c))
			v.Set(c, "first's own")
			if err := Sleep(c, 0); err != nil {
				return err
			}
			r.log("first after await: %s", v.Get(c))
			return nil
		})
		v.Set(tk, "main-2") // after first was created: first keeps main-1
		second := startTask(tk, "second", func(c *T) error {
			r.log("second sees %s", v.Get(c))
			return nil
		})
		awaitAll(tk, first, second)
		r.log("main after children: %s", v.Get(tk))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s main before set: default",
		"0s first sees main-1",
		"0s second sees main-2",
		"0s first after await: first's own",
		"0s main after children: main-2",
	}, r)
}

// CTX-2: copy-on-create costs nothing until someone changes a context: a
// task without one has none (nil), children of a task with one share its
// node, and only the creator's next change moves it to a new node.
func TestCTX2_SharedUntilChanged(t *testing.T) {
	v := NewContextVar("v", 0)
	runVirtual(t, func(tk *T) error {
		bare := CreateTask(tk, func(*T) (int, error) { return 0, nil })
		if bare.t.ctx != nil {
			t.Error("a task created without any context has a context node")
		}
		v.Set(tk, 1)
		node := tk.ctx
		a := CreateTask(tk, func(c *T) (int, error) { return v.Get(c), nil })
		b := CreateTask(tk, func(c *T) (int, error) { return v.Get(c), nil })
		if a.t.ctx != node || b.t.ctx != node {
			t.Error("children do not share their creator's node")
		}
		v.Set(tk, 2)
		if tk.ctx == node || node.base.Value(v.key).(contextVarBox[int]).v != 1 {
			t.Error("the creator changed the node its children share")
		}
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		av, _ := a.Await(tk)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		bv, _ := b.Await(tk)
		if av != 1 || bv != 1 || v.Get(tk) != 2 {
			t.Errorf("children see %d %d, main %d; want 1 1 2", av, bv, v.Get(tk))
		}
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(bare)
		return nil
	})
}

// ContextVar.Reset restores the value before the Set that made the token,
// including "no value" (the default again); a token of another variable,
// of another task, or used twice is refused without a change.
func TestContextVarReset(t *testing.T) {
	v := NewContextVar("v", "default")
	w := NewContextVar("w", "")
	var r eventLog
	runVirtual(t, func(tk *T) error {
		first := v.Set(tk, "one")
		second := v.Set(tk, "two")
		r.log("after two sets: %s", v.Get(tk))
		r.log("reset with w: %s", describe(w.Reset(tk, (*ContextVarToken[string])(nil))))
		child := CreateTask(tk, func(c *T) (string, error) {
			return describe(v.Reset(c, second)), nil
		})
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		msg, _ := child.Await(tk)
		r.log("reset from another task: %s", msg)
		r.log("reset second: %s -> %s", describe(v.Reset(tk, second)), v.Get(tk))
		r.log("reset second again: %s -> %s", describe(v.Reset(tk, second)), v.Get(tk))
		r.log("reset first: %s -> %s", describe(v.Reset(tk, first)), v.Get(tk))
		r.log("token var: %v", first.Var() == v)
		return nil
	})
	checkEvents(t, []string{
		"after two sets: two",
		`reset with w: ValueError("Token was created by a different ContextVar")`,
		`reset from another task: ValueError("Token was created in a different Context")`,
		"reset second: <nil> -> one",
		`reset second again: RuntimeError("Token has already been used once") -> one`,
		"reset first: <nil> -> default",
		"token var: true",
	}, &r)
}

// A nil interface value is a value: Set(nil) is not "unset".
func TestContextVarNilValue(t *testing.T) {
	v := NewContextVar[error]("err", errBoom)
	runVirtual(t, func(tk *T) error {
		v.Set(tk, nil)
		if got := v.Get(tk); got != nil {
			t.Errorf("Get after Set(nil) = %v", got)
		}
		if s := v.String(); s != "<ContextVar name='err'>" || v.Name() != "err" {
			t.Errorf("String %q Name %q", s, v.Name())
		}
		return nil
	})
}

// A task's Context carries its values, is not done while the task runs,
// and is done when it is done, with a cause that matches ErrTaskDone and
// the task's outcome. Go code handed it reads ContextVars with Value.
func TestTaskContextDoneWithTask(t *testing.T) {
	v := NewContextVar("v", "")
	var r eventLog
	var okCtx, failCtx, cancelCtx context.Context
	runVirtual(t, func(tk *T) error {
		v.Set(tk, "inherited")
		ok := CreateTask(tk, func(c *T) (int, error) {
			okCtx = c.Context()
			r.log("while running: err=%v value=%s", okCtx.Err(), v.Value(okCtx))
			return 1, nil
		})
		fail := CreateTask(tk, func(c *T) (int, error) { failCtx = c.Context(); return 0, errBoom })
		cancelled := CreateTask(tk, func(c *T) (int, error) {
			cancelCtx = c.Context()
			return 0, Sleep(c, Never)
		})
		//asynciovet:ignore droppedcancel a yield that orders the test tasks; the task is not cancelled here
		_ = Sleep(tk, 0)
		cancelled.Cancel("stop")
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_, _ = ok.Await(tk)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_, _ = fail.Await(tk)
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_, _ = cancelled.Await(tk)
		for _, c := range []struct {
			name string
			ctx  context.Context
		}{{"ok", okCtx}, {"fail", failCtx}, {"cancelled", cancelCtx}} {
			cause := context.Cause(c.ctx)
			r.log("%s: err=%v cause=%q taskDone=%v boom=%v cancelled=%v", c.name, c.ctx.Err(), cause,
				errors.Is(cause, ErrTaskDone), errors.Is(cause, errBoom), IsCancelled(cause))
		}
		late := ok.t.Context() // asked after the end: done already
		r.log("asked late: %v", context.Cause(late) == ErrTaskDone)
		return nil
	})
	checkEvents(t, []string{
		"while running: err=<nil> value=inherited",
		`ok: err=context canceled cause="asyncio: task done" taskDone=true boom=false cancelled=false`,
		`fail: err=context canceled cause="asyncio: task done: boom" taskDone=true boom=true cancelled=false`,
		`cancelled: err=context canceled cause="asyncio: task done: asyncio: cancelled: stop" taskDone=true boom=false cancelled=true`,
		"asked late: true",
	}, &r)
}

// A task still pending when its loop closes has its Context cancelled
// with ErrLoopClosed; asking a pending task of a closed loop gives a done
// one too.
func TestTaskContextDoneAtClose(t *testing.T) {
	l := NewTestLoop()
	handlerLog(l, &eventLog{})
	var running context.Context
	//asynciovet:ignore unawaitedtask the loop closes with this task pending, on purpose
	started := CreateTask(l, func(c *T) (int, error) {
		running = c.Context()
		return 0, Sleep(c, Never)
	})
	runOne(t, l)
	neverStarted := CreateTask(l, func(c *T) (int, error) { return 0, nil })
	mustClose(t, l)
	if !errors.Is(context.Cause(running), ErrLoopClosed) {
		t.Errorf("started task's context: cause %v", context.Cause(running))
	}
	if ctx := neverStarted.t.Context(); !errors.Is(context.Cause(ctx), ErrLoopClosed) {
		t.Errorf("task of a closed loop: cause %v", context.Cause(ctx))
	}
	_ = started
}

// A child starts with its creator's base, not with the creator's end: it
// may outlive its creator (asyncio tasks are independent), and its Context
// stays live until it is done itself.
func TestTaskContextOutlivesCreator(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		var child *Task[struct{}]
		parent := startTask(tk, "parent", func(p *T) error {
			_ = p.Context()
			child = startTask(p, "child", func(c *T) error {
				if err := Sleep(c, 0); err != nil {
					return err
				}
				r.log("child after parent ended: ctx err=%v", c.Context().Err())
				return nil
			})
			return nil
		})
		awaitAll(tk, parent)
		r.log("parent ctx: %v", parent.t.Context().Err())
		awaitAll(tk, child)
		return nil
	})
	checkEvents(t, []string{"parent ctx: context canceled", "child after parent ended: ctx err=<nil>"}, &r)
}

// SetContext replaces the task's context for what comes next: Context
// and children created afterwards see it, children created before keep
// theirs; it does not bind (the task is not cancelled when ctx is done,
// but its Context is). A nil context panics with a *ValueError.
func TestSetContext(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		before := startTask(tk, "before", func(c *T) error {
			r.log("before: %v", c.Context().Value(ctxKey("k")))
			return nil
		})
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey("k"), "set"))
		tk.SetContext(parent)
		after := startTask(tk, "after", func(c *T) error {
			r.log("after: %v", c.Context().Value(ctxKey("k")))
			return nil
		})
		own := tk.Context()
		cancel()
		r.log("own ctx done with its base: %v; main cancelling=%d", own.Err() != nil, tk.Cancelling())
		awaitAll(tk, before, after)
		//lint:ignore SA1012 the test checks that a nil ctx panics with a *ValueError
		v := mustPanic(t, "SetContext(nil)", func() { tk.SetContext(nil) })
		var ve *ValueError
		r.log("nil: %v", errors.As(v.(error), &ve))
		return nil
	})
	checkEvents(t, []string{
		"own ctx done with its base: true; main cancelling=0",
		"before: <nil>",
		"after: set",
		"nil: true",
	}, &r)
}

// WithContext gives a task its context and binds it: a ctx done before the
// task starts cancels it before its first step (its function never runs);
// a nil ctx panics with a *ValueError before anything is created.
func TestWithContextAlreadyDone(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errMy)
		task := CreateTask(tk, func(*T) (int, error) { r.log("ran"); return 0, nil }, WithContext(ctx))
		_, err := task.Await(tk)
		r.log("task: %s", describe(err))
		//lint:ignore SA1012 the test checks that a nil ctx panics with a *ValueError
		v := mustPanic(t, "WithContext(nil)", func() { WithContext(nil) })
		r.log("nil: %v", describe(v.(error)))
		return nil
	})
	checkEvents(t, []string{`task: CancelledError("my")`, `nil: ValueError("WithContext: nil context")`}, &r)
}

// WithContext binds: when ctx is done while the task waits, the task is
// cancelled with the cause as the message (through CallSoonThreadsafe; a
// real-clock loop, woken by that call). A bound task that finishes stops
// watching: cancelling ctx afterwards touches nothing.
func TestWithContextCancelsTask(t *testing.T) {
	var r eventLog
	ctx, cancel := context.WithCancelCause(context.Background())
	done, doneCancel := context.WithCancel(context.Background())
	_, err := Run(func(tk *T) (struct{}, error) {
		finished := CreateTask(tk, func(*T) (int, error) { return 1, nil }, WithContext(done))
		if _, err := finished.Await(tk); err != nil {
			return struct{}{}, err
		}
		if finished.t.ctx.stopWatch != nil {
			t.Error("a finished task still watches its context")
		}
		doneCancel()
		bound := CreateTask(tk, func(c *T) (int, error) {
			r.log("bound: value %v", c.Context().Value(ctxKey("k")))
			go cancel(errStop) // from another goroutine, as a signal would
			_, err := NewFuture[int](c).Await(c)
			r.log("bound: %s", describe(err))
			return 0, err
		}, WithContext(context.WithValue(ctx, ctxKey("k"), "v")))
		_, err := bound.Await(tk)
		r.log("awaiter: %s", describe(err))
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{`bound: value v`, `bound: CancelledError("stop")`, `awaiter: CancelledError("stop")`}, &r)
}

var errStop = errors.New("stop")
