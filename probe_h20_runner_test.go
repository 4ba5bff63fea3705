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
