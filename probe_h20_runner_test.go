package asyncio

import (
	"errors"
	"testing"
)

// TestH20_CloseUnusedRunnerLeavesItUsable: Close on a Runner that had no
// loop yet marked it closed, so its first RunWith returned "Runner is
// closed". CPython 3.13's Runner.close returns at once unless the runner
// is initialised (state INITIALIZED), so `r = Runner(); r.close();
// r.run(coro)` runs coro, and only closing an initialised runner makes it
// refuse.
func TestH20_CloseUnusedRunnerLeavesItUsable(t *testing.T) {
	r := NewRunner(WithVirtualTime())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	v, err := RunWith(r, func(*T) (int, error) { return 5, nil })
	if v != 5 || err != nil {
		t.Errorf("RunWith after Close of an unused runner: %d, %v; want 5, nil (CPython runs it)", v, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r.loop == nil || !r.loop.IsClosed() {
		t.Fatal("Close after a run did not close the runner's loop")
	}
	if _, err := RunWith(r, func(*T) (int, error) { return 1, nil }); !errors.Is(err, ErrRuntime) || err.Error() != "Runner is closed" {
		t.Errorf("RunWith after closing a used runner: %v, want the RuntimeError Runner is closed", err)
	}
}

// TestH20_RunnerContextIsMainsVarContext: the first run's main of a Runner
// runs in the runner's context, so its T.VarContext() is that context;
// but RunWith kept a new VarContext for the next runs instead, and what
// they set never showed in the one main had been handed. In CPython 3.13
// the first main's task.get_context() is Runner._context itself: after
// run 2 sets v = 2, ctx.get(v) is 2.
func TestH20_RunnerContextIsMainsVarContext(t *testing.T) {
	v := NewContextVar("v", 0)
	r := NewRunner(WithVirtualTime())
	defer r.Close()
	var c *VarContext
	if _, err := RunWith(r, func(tk *T) (int, error) {
		v.Set(tk, 1)
		c = tk.VarContext()
		return 0, nil
	}); err != nil {
		t.Fatal(err)
	}
	seen, err := RunWith(r, func(tk *T) (int, error) {
		old := v.Get(tk)
		v.Set(tk, 2)
		return old, nil
	})
	if err != nil || seen != 1 {
		t.Fatalf("run 2 saw %d, %v; want run 1's 1", seen, err)
	}
	if got := v.Value(c.Context()); got != 2 {
		t.Errorf("run 1's T.VarContext after run 2 set v=2: v = %d, want 2 (it is the runner's context)", got)
	}
}
