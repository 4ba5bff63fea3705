package asyncio

import (
	"context"
	"testing"
	"time"
)

// Work on the executor takes no virtual time: the clock must not jump to
// an unrelated timer while a job is in flight.
func TestVirtualTimeWaitsForExecutorWork(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	release := make(chan struct{})
	sleeper := CreateTask(l, func(t *T) (int, error) { return 0, Sleep(t, time.Hour) })
	job := CreateTask(l, func(t *T) (time.Duration, error) {
		l.CallSoon(func() { close(release) }) // the job may finish once the loop has had a chance to block
		_, err := ToThread(t, func(ctx context.Context) (int, error) {
			<-release
			return 1, nil
		})
		return t.Loop().Time(), err
	})
	if err := l.RunUntilComplete(job); err != nil {
		t.Fatal(err)
	}
	if at, _ := job.Result(); at != 0 {
		t.Errorf("executor job finished at virtual time %v, want 0 (the clock jumped while it ran)", at)
	}
	sleeper.Cancel()
	l.RunUntilComplete(sleeper)
}
