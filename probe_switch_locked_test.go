package asyncio

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// lockedRunner runs functions on one goroutine locked to its thread, for
// as long as the test needs it.
type lockedRunner struct{ do chan func() }

func newLockedRunner() *lockedRunner {
	r := &lockedRunner{do: make(chan func())}
	go func() {
		runtime.LockOSThread()
		for fn := range r.do {
			fn()
		}
	}()
	return r
}

func (r *lockedRunner) run(fn func()) {
	done := make(chan struct{})
	r.do <- func() { defer close(done); fn() }
	<-done
}

func (r *lockedRunner) stop() { close(r.do) }

// Two locked drivers and an unlocked one take turns on one loop (lock
// keys 0, K1, K2: indices into Loop.workerKeys). RunForever refuses every
// driver but the one a pending task's goroutine was started under, names
// the task, and changes nothing; each accepted run reuses pooled
// goroutines of its own key only, and nothing is left at Close.
func TestProbeSwitch_ThreeLockKeysTakeTurns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l1, l2 := newLockedRunner(), newLockedRunner()
	defer l2.stop()
	defer l1.stop()
	l := NewLoop()
	l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
	// parkedOn starts a task that waits on f, and a few that finish (the
	// pool), in one run.
	parkedOn := func(name string, f *Future[int]) (*Task[int], error) {
		tk := CreateTask(l, func(t *T) (int, error) { return f.Await(t) }, WithName(name))
		err := l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) {
			var quick []AwaitableOf[int]
			for i := range 3 {
				quick = append(quick, CreateTask(t, func(*T) (int, error) { return i, nil }))
			}
			_, err := Gather(t, quick...).Await(t)
			return 0, err
		}))
		return tk, err
	}
	finish := func(tk *Task[int], f *Future[int], v int) error {
		_ = f.SetResult(v)
		if err := l.RunUntilComplete(tk); err != nil {
			return err
		}
		if got, _ := tk.Result(); got != v {
			return errors.New("wrong result")
		}
		return nil
	}
	refused := func(where string, name string, run func(func())) {
		t.Helper()
		var err error
		run(func() { err = l.RunUntilComplete(CreateTask(l, func(*T) (int, error) { return 0, nil })) })
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), name) {
			t.Errorf("run from %s: %v, want a *RuntimeError naming %s", where, err, name)
		}
	}
	here := func(fn func()) { fn() }

	fx := NewFuture[int](l)
	x, err := parkedOn("X", fx)
	if err != nil {
		t.Fatal(err)
	}
	refused("L1", "X", l1.run)
	refused("L2", "X", l2.run)
	if err := finish(x, fx, 1); err != nil {
		t.Fatal(err)
	}
	fy := NewFuture[int](l)
	var y *Task[int]
	l1.run(func() { y, err = parkedOn("Y", fy) })
	if err != nil {
		t.Fatal(err)
	}
	refused("L2", "Y", l2.run)
	refused("here", "Y", here)
	l1.run(func() { err = finish(y, fy, 2) })
	if err != nil {
		t.Fatal(err)
	}
	fz := NewFuture[int](l)
	var z *Task[int]
	l2.run(func() {
		if z, err = parkedOn("Z", fz); err == nil {
			err = finish(z, fz, 3)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.workerKeys) != 3 {
		t.Errorf("workerKeys %v, want three keys", l.workerKeys)
	}
	for _, w := range l.workers {
		if l.workerKeys[w.key] != 0 {
			t.Errorf("a locked driver's goroutine is pooled after its run: key %d", l.workerKeys[w.key])
		}
	}
	fw := NewFuture[int](l)
	w, err := parkedOn("W", fw)
	if err != nil {
		t.Fatal(err)
	}
	if err := finish(w, fw, 4); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

// RunForever refused a goroutine (a task started under a locked driver
// was pending) and recorded that goroutine as probed without recording
// its lock state: the same goroutine's next RunForever took the locked
// driver's key for its own, was not refused, and resumed the locked
// task's coroutine from an unlocked goroutine, a fatal error ("coro: OS
// thread locking must match"). Each attempt must be refused, and the loop
// must still run and close from the locked driver. In a child process,
// since the failure kills the process.
func TestProbeSwitch_RunForeverRefusedTwiceFromTheSameGoroutine(t *testing.T) {
	out, err := runHelper("probe-switch-refused-twice")
	if err != nil || strings.Count(out, "refused: true") != 2 || !strings.Contains(out, "done: 1 <nil>") {
		t.Errorf("helper: %v, output:\n%s\nwant both attempts refused, then the locked driver finishing X", err, out)
	}
}

func init() {
	helperProcesses["probe-switch-refused-twice"] = func() int {
		l1 := newLockedRunner()
		defer l1.stop()
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		fx := NewFuture[int](l)
		var x *Task[int]
		l1.run(func() {
			x = CreateTask(l, func(t *T) (int, error) { return fx.Await(t) }, WithName("X"))
			_ = l.RunUntilComplete(CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, 0) }))
		})
		for range 2 {
			err := l.RunUntilComplete(CreateTask(l, func(*T) (int, error) { _ = fx.SetResult(1); return 0, nil }))
			var re *RuntimeError
			println("refused:", errors.As(err, &re) && strings.Contains(err.Error(), "X"))
		}
		l1.run(func() {
			_ = fx.SetResult(1)
			err := l.RunUntilComplete(x)
			v, _ := x.Result()
			println("done:", v, errorString(err))
			println("closed:", errorString(l.Close()))
		})
		return 0
	}
}
