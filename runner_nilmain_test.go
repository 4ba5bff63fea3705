package asyncio

import "testing"

// Run, RunContext and RunWith with a nil main panic with a *ValueError
// naming it before a loop is made: the panic came from CreateTask, after
// the Runner had made its loop, and Run's Close was never reached, so the
// loop was left unclosed (asyncio.run(None) raises ValueError inside the
// Runner's with block, which closes it). A Runner refused a nil main is
// still unused: Close leaves it usable.
func TestRunNilMainMakesNoLoop(t *testing.T) {
	r := NewRunner()
	v := mustPanic(t, "RunWith(nil)", func() { _, _ = RunWith[int](r, nil) })
	if !valueErrorPanic(v, "nil main") {
		t.Errorf("RunWith(r, nil) panicked with %v, want a *ValueError naming the nil main", v)
	}
	if r.loop != nil {
		t.Errorf("RunWith(r, nil) made the runner's loop before refusing")
	}
	v = mustPanic(t, "Run(nil)", func() { _, _ = Run[int](nil) })
	if !valueErrorPanic(v, "nil main") {
		t.Errorf("Run(nil) panicked with %v, want a *ValueError naming the nil main", v)
	}
	if got, err := RunWith(r, func(*T) (int, error) { return 7, nil }); got != 7 || err != nil {
		t.Errorf("RunWith after the refused nil main = %d, %v; want 7, nil", got, err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}
