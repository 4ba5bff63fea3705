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
