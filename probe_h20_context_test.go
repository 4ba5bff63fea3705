package asyncio

import (
	"errors"
	"strings"
	"testing"
)

// TestH20_ResetUsedTokenIsRuntimeErrorFirst: Reset checked the token's
// variable and context before whether it was used, so a used token reset
// in another task, or with another variable, gave a ValueError. CPython
// 3.13's ContextVar.reset checks tok_used first: a used token raises
// RuntimeError("... has already been used once") whatever variable or
// context it is reset with.
func TestH20_ResetUsedTokenIsRuntimeErrorFirst(t *testing.T) {
	v := NewContextVar("v", 0)
	other := NewContextVar("other", 0)
	var got []string
	runVirtual(t, func(tk *T) error {
		tok := v.Set(tk, 1)
		if err := v.Reset(tk, tok); err != nil {
			return err
		}
		got = append(got, "other var: "+describe(other.Reset(tk, (*ContextVarToken[int])(tok))))
		child := startTask(tk, "child", func(c *T) error {
			got = append(got, "other context: "+describe(v.Reset(c, tok)))
			return nil
		})
		awaitAll(tk, child)
		return nil
	})
	checkLines(t, []string{
		`other var: RuntimeError("Token has already been used once")`,
		`other context: RuntimeError("Token has already been used once")`,
	}, got)
}

// TestH20_ContextVarNilTaskIsValueError: Lookup, GetDefault, IsSet, Reset,
// CopyContext and T.VarContext dereferenced a nil *T (a runtime nil
// pointer panic) where Get and Set panic with a *ValueError naming the
// call; bad input gets a clear error naming the mistake, and Reset with
// a nil t must leave the token unused.
func TestH20_ContextVarNilTaskIsValueError(t *testing.T) {
	v := NewContextVar("v", 0)
	runVirtual(t, func(tk *T) error {
		var nilT *T
		tok := v.Set(tk, 1)
		for name, call := range map[string]func(){
			"ContextVar.Lookup":     func() { v.Lookup(nilT) },
			"ContextVar.GetDefault": func() { v.GetDefault(nilT, 2) },
			"ContextVar.IsSet":      func() { v.IsSet(nilT) },
			"ContextVar.Reset":      func() { _ = v.Reset(nilT, tok) },
			"CopyContext":           func() { CopyContext(nilT) },
			"T.VarContext":          func() { nilT.VarContext() },
		} {
			p := mustPanic(t, name, call)
			err, _ := p.(error)
			if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), name+": nil *T") {
				t.Errorf("%s(nil): panicked with %v, want a ValueError naming %s and the nil *T", name, p, name)
			}
		}
		if err := v.Reset(tk, tok); err != nil || v.Get(tk) != 0 {
			t.Errorf("Reset after the refused nil-t Reset: %v, value %d; want the token unused", err, v.Get(tk))
		}
		return nil
	})
}
