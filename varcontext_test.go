package asyncio

import (
	"strings"
	"testing"
)

// A task run in a VarContext writes its Sets and Resets there; the tasks
// it creates start with a copy, whose Sets stay theirs; VarContext is
// the same object on each call, and one made for a task without one
// follows the task's later Sets.
func TestVarContext_WriteThroughAndCopies(t *testing.T) {
	v := NewContextVarNoDefault[string]("v")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		c := CopyContext(tk)
		task := CreateTask(tk, func(ct *T) (struct{}, error) {
			v.Set(ct, "a")
			child := startTask(ct, "child", func(cc *T) error {
				v.Set(cc, "child's")
				return nil
			})
			awaitAll(ct, child)
			val, _ := v.LookupValue(c.Context())
			r.log("c after the child: %s", val)
			v.Set(ct, "b")
			r.log("same VarContext: %v", ct.VarContext() == c)
			return struct{}{}, nil
		}, WithVarContext(c))
		awaitAll(tk, task)
		val, ok := v.LookupValue(c.Context())
		r.log("c after the task: %s %v", val, ok)
		_, ok = v.Lookup(tk)
		r.log("main untouched: %v", !ok)
		own := tk.VarContext()
		v.Set(tk, "main's")
		val, _ = v.LookupValue(own.Context())
		r.log("main's VarContext follows: %s, same: %v", val, tk.VarContext() == own)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"0s c after the child: a",
		"0s same VarContext: true",
		"0s c after the task: b true",
		"0s main untouched: true",
		"0s main's VarContext follows: main's, same: true",
	}, r)
	mustPanic(t, "nil VarContext", func() { WithVarContext(nil) })
	//lint:ignore SA1012 a nil context is the mistake under test
	mustPanic(t, "nil context", func() { NewVarContext(nil) })
}

// Tasks running in one VarContext share it live, as Python's tasks created
// with the same context= do (each step enters the one context object): a
// task reads what another set after it was created, and what is in the
// context at the end is the last Set of any of them. (Each task used to
// copy the context at creation.) The trace is CPython 3.13's.
func TestVarContext_SharedByTasksRunningInIt(t *testing.T) {
	v := NewContextVar("v", "def")
	r, err := runMain(t, func(tk *T, r *eventLog) error {
		vc := CopyContext(tk)
		x := startTask(tk, "x", func(tk *T) error {
			v.Set(tk, "x")
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			r.log("x sees %s", v.Get(tk))
			return nil
		}, WithVarContext(vc))
		y := startTask(tk, "y", func(tk *T) error {
			r.log("y sees %s", v.Get(tk))
			if err := Sleep(tk, 0); err != nil {
				return err
			}
			r.log("y after await sees %s", v.Get(tk))
			return nil
		}, WithVarContext(vc))
		if err := Sleep(tk, 0); err != nil {
			return err
		}
		z := startTask(tk, "z", func(tk *T) error {
			r.log("z sees %s", v.Get(tk))
			v.Set(tk, "z")
			return nil
		}, WithVarContext(vc))
		awaitAll(tk, x, y, z)
		r.log("vc holds %s, main sees %s", v.Value(vc.Context()), v.Get(tk))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"0s y sees x", "0s y after await sees x", "0s z sees x", "0s x sees z", "0s vc holds z, main sees def"}, r)
}

// A token belongs to the context it was made in, not to its task: another
// task running in the same VarContext, or the next run of a Runner (whose
// runs share its context), may Reset it, as in CPython; a task with a
// copy of that context may not.
func TestContextVarToken_BelongsToTheContext(t *testing.T) {
	x := NewContextVar("x", 0)
	_, err := Run(func(tk *T) (struct{}, error) {
		vc := CopyContext(tk)
		var tok *ContextVarToken[int]
		a := startTask(tk, "a", func(tk *T) error { tok = x.Set(tk, 1); return nil }, WithVarContext(vc))
		awaitAll(tk, a)
		copied := startTask(tk, "copy", func(tk *T) error { return x.Reset(tk, tok) }, WithVarContext(NewVarContext(vc.Context())))
		if err := tk.Await(copied); err == nil || !strings.Contains(err.Error(), "different Context") {
			t.Errorf("Reset from a copy of the context: %v", err)
		}
		b := startTask(tk, "b", func(tk *T) error { return x.Reset(tk, tok) }, WithVarContext(vc))
		if err := tk.Await(b); err != nil {
			t.Errorf("Reset from another task in the same VarContext: %v", err)
		}
		if v := x.Value(vc.Context()); v != 0 {
			t.Errorf("x in the context after the Reset: %d", v)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner()
	defer r.Close()
	var tok *ContextVarToken[int]
	if _, err := RunWith(r, func(tk *T) (int, error) { tok = x.Set(tk, 5); return 0, nil }); err != nil {
		t.Fatal(err)
	}
	v, err := RunWith(r, func(tk *T) (int, error) {
		if err := x.Reset(tk, tok); err != nil {
			return 0, err
		}
		return x.Get(tk), nil
	})
	if v != 0 || err != nil {
		t.Errorf("the next run's Reset of the first run's token: %d, %v", v, err)
	}
}
