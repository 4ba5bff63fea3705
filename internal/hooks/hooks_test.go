package hooks

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type loopA struct{ hook func(*taskA, func() string) }
type taskA struct{}
type taskB struct{}

// The registered setter is called with the caller's own types, and a
// caller whose types do not match the registration panics naming both.
func TestSetSuspendHook_Typed(t *testing.T) {
	saved := suspendHookSetter
	defer func() { suspendHookSetter = saved }()
	Register(func(l *loopA, fn func(*taskA, func() string)) { l.hook = fn })

	l := &loopA{}
	called := false
	SetSuspendHook(l, func(*taskA, func() string) { called = true })
	if l.hook == nil {
		t.Fatal("the registered setter did not install the hook")
	}
	l.hook(&taskA{}, nil)
	if !called {
		t.Error("the installed hook is not the caller's")
	}
	SetSuspendHook[loopA, taskA](l, nil)
	if l.hook != nil {
		t.Error("nil did not remove the hook")
	}

	defer func() {
		r := recover()
		msg, _ := r.(string)
		if !strings.Contains(msg, "hooks.loopA") || !strings.Contains(msg, "hooks.taskB") {
			t.Errorf("mismatched types: recovered %v, want a panic naming loopA and taskB", r)
		}
	}()
	SetSuspendHook(l, func(*taskB, func() string) {})
}
