package asyncio

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestTaskPanicBecomesPanicError(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(t *T) (int, error) {
		Sleep(t, 0)
		panicInTask()
		return 0, nil
	})
	other := CreateTask(l, func(t *T) (int, error) { Sleep(t, time.Second); return 2, nil })
	err := l.RunUntilComplete(tk)
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Value != "task panic value" {
		t.Fatalf("err = %#v, want *PanicError", err)
	}
	if !strings.Contains(string(pe.Stack), "panicInTask") {
		t.Errorf("stack does not show the panic site:\n%s", pe.Stack)
	}
	if err := l.RunUntilComplete(other); err != nil {
		t.Errorf("the loop must go on after a task panic: %v", err)
	}
	boom := errors.New("wrapped")
	tk2 := CreateTask(l, func(*T) (int, error) { panic(boom) })
	if err := l.RunUntilComplete(tk2); !errors.Is(err, boom) {
		t.Errorf("panic(err) should unwrap to err, got %v", err)
	}
}

func panicInTask() { panic("task panic value") }

// A runtime.Goexit in a task (what t.FailNow does) fails the task and, as
// iter.Pull propagates it, also ends the goroutine running the loop — in a
// test, that fails the test, which is what FailNow means. The loop is left
// not running, so it can be closed.
func TestTaskGoexitFailsTaskAndEndsLoopGoroutine(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	tk := CreateTask(l, func(t *T) (int, error) {
		Sleep(t, 0)
		runtime.Goexit()
		return 0, nil
	})
	returned := false
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		l.RunUntilComplete(tk)
		returned = true
	}()
	<-exited
	if returned {
		t.Error("RunUntilComplete returned; want the Goexit to end the loop's goroutine")
	}
	if err := tk.Err(); !errors.Is(err, errGoexit) {
		t.Errorf("task error = %v, want errGoexit", err)
	}
	if l.IsRunning() {
		t.Error("loop still marked running")
	}
}

func TestBadInput_AwaitWithTaskThatIsNotRunning(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	handlerLog(l, &r)
	f := NewFuture[int](l)
	var saved *T
	tk := CreateTask(l, func(t *T) (int, error) { saved = t; return f.Await(t) }, WithName("victim"))
	runOne(t, l)
	// From the test goroutine, outside the loop.
	v := mustPanic(t, "Await outside the loop", func() { f.Await(saved) })
	r.log("outside: %v", v)
	// From a plain callback.
	l.CallSoon(func() {
		v := mustPanic(t, "Await in a callback", func() { Sleep(saved, 0) })
		r.log("callback: %v", v)
	})
	runOne(t, l)
	// With another task's handle.
	other := CreateTask(l, func(*T) (int, error) {
		v := mustPanic(t, "Await with another task's T", func() { f.Await(saved) })
		r.log("other task: %v", v)
		return 0, nil
	})
	if err := l.RunUntilComplete(other); err != nil {
		t.Fatal(err)
	}
	want := `asyncio: await with task "victim", which is not the running task (awaiting outside a task, from a callback or from another goroutine?)`
	checkEvents(t, []string{"outside: " + want, "callback: " + want, "other task: " + want}, &r)
	tk.Cancel()
	l.RunUntilComplete(tk)
}
