package asyncio

// Issue 19 items 4, 8 and 9: an eager task with a done context, nil
// arguments, and awaiting another loop's future.

import (
	"context"
	"testing"
)

// An eager task (WithEagerStart, or a loop WithEagerTasks) created with a
// context that is already done is cancelled at once, inside CreateTask, and
// its function never runs (CANCEL-3), as a scheduled task is at its first
// step.
func TestEagerTaskWithDoneContextNeverRuns(t *testing.T) {
	for _, c := range []struct {
		name     string
		loopOpts []LoopOption
		taskOpts []TaskOption
	}{
		{"WithEagerStart", []LoopOption{WithVirtualTime()}, []TaskOption{WithEagerStart()}},
		{"WithEagerTasks", []LoopOption{WithVirtualTime(), WithEagerTasks()}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r eventLog
			_, err := Run(func(tk *T) (struct{}, error) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errMy)
				task := CreateTask(tk, func(*T) (int, error) { r.log("ran"); return 0, nil },
					append(c.taskOpts, WithContext(ctx))...)
				r.log("done at once: %v", task.Done())
				_, err := task.Await(tk)
				r.log("task: %s", describe(err))
				return struct{}{}, nil
			}, c.loopOpts...)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			checkEvents(t, []string{"done at once: true", `task: CancelledError("my")`}, &r)
		})
	}
}

// Nil functions and nil tasks are *ValueErrors naming the call, like every
// other nil argument, not a *RuntimeError or a nil dereference.
func TestNilArgumentsAreValueErrors(t *testing.T) {
	var r eventLog
	runVirtual(t, func(tk *T) error {
		cv := NewContextVar("cv", 1)
		try := func(what string, f func()) {
			v := mustPanic(t, what, f)
			err, _ := v.(error)
			r.log("%s: %s", what, describe(err))
		}
		//asynciovet:ignore unawaitedtask CreateTaskErr must panic here (misuse under test): no task is created
		try("CreateTaskErr", func() { CreateTaskErr(tk, nil) })
		//asynciovet:ignore droppedcancel test scaffolding: the group only hosts the SpawnErr misuse; the task is not cancelled here
		_ = TaskGroup(tk, func(g *Group) error {
			try("SpawnErr", func() { _, _ = SpawnErr(g, nil) })
			return nil
		})
		try("Get", func() { cv.Get(nil) })
		try("Set", func() { cv.Set(nil, 2) })
		//lint:ignore SA1012 the nil context is the misuse under test
		try("Value", func() { cv.Value(nil) })
		r.log("unchanged: %d", cv.Get(tk))
		return nil
	})
	checkEvents(t, []string{
		`CreateTaskErr: ValueError("CreateTaskErr: nil coroutine function")`,
		`SpawnErr: ValueError("SpawnErr: nil coroutine function")`,
		`Get: ValueError("ContextVar.Get: nil *T (pass the running task's t, the argument of its function)")`,
		`Set: ValueError("ContextVar.Set: nil *T (pass the running task's t, the argument of its function)")`,
		`Value: ValueError("ContextVar.Value: nil context")`,
		"unchanged: 1",
	}, &r)
}

// Awaiting a future or a task of another loop fails the await with
// asyncio's message, naming both by their repr (no Go struct dump).
func TestAwaitFutureOfAnotherLoopMessage(t *testing.T) {
	other := NewTestLoop()
	defer mustClose(t, other)
	foreign := NewFuture[int](other)
	foreignTask := CreateTask(other, func(*T) (int, error) { return 0, nil }, WithName("far"))
	var r eventLog
	runVirtual(t, func(tk *T) error {
		w := startTask(tk, "w", func(x *T) error {
			_, err := foreign.Await(x)
			r.log("%s", describe(err))
			_, err = foreignTask.Await(x)
			r.log("%s", describe(err))
			return nil
		})
		//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
		_ = tk.Await(w)
		return nil
	})
	if err := other.RunUntilComplete(foreignTask); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		`RuntimeError("Task <Task pending name='w'> got Future <Future pending> attached to a different loop")`,
		`RuntimeError("Task <Task pending name='w'> got Future <Task pending name='far'> attached to a different loop")`,
	}, &r)
}
