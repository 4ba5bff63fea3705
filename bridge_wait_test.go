package asyncio

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A Go call that waits, with its ctx, for a task of its own loop does not
// hold the virtual clock meanwhile: the task's hour-long sleep passes and
// the call returns (before, the loop waited for the call forever).
func TestGoWaitingForItsLoopReleasesTheClock(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	main := CreateTask(l, func(tk *T) (time.Duration, error) {
		return Go(tk, func(ctx context.Context) (time.Duration, error) {
			cf := RunCoroutineThreadsafe(l, func(tk *T) (time.Duration, error) {
				err := Sleep(tk, time.Hour)
				return tk.Loop().Time(), err
			})
			if err := cf.Wait(ctx); err != nil {
				return 0, err
			}
			return cf.Result()
		})
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if v, _ := main.Result(); v != time.Hour {
		t.Fatalf("the task ended at %v, want 1h", v)
	}
}

// A Go call cancelled while it waits for its loop is taken out of the
// count exactly once: afterwards the loop's clock moves as it should (a
// count left at +1 or -1 would make the loop wait for outside work
// forever instead of moving to the next timer).
func TestGoCancelledWhileWaitingForItsLoop(t *testing.T) {
	l := NewTestLoop()
	defer l.Close()
	main := CreateTask(l, func(tk *T) (time.Duration, error) {
		_, err := WaitForFunc(tk, time.Minute, func(tk *T) (struct{}, error) {
			return Go(tk, func(ctx context.Context) (struct{}, error) {
				cf := RunCoroutineThreadsafe(l, func(tk *T) (struct{}, error) { return struct{}{}, Sleep(tk, time.Hour) })
				err := cf.Wait(ctx)
				cf.Cancel()
				return struct{}{}, err
			})
		})
		if !errors.Is(err, ErrTimeout) {
			return 0, err
		}
		if now := tk.Loop().Time(); now != time.Minute {
			t.Errorf("timed out at %v, want 1m", now)
		}
		err = Sleep(tk, time.Hour)
		return tk.Loop().Time(), err
	})
	if err := l.RunUntilComplete(main); err != nil {
		t.Fatal(err)
	}
	if v, _ := main.Result(); v != time.Hour+time.Minute {
		t.Fatalf("the sleep after the cancelled call ended at %v, want 1h1m", v)
	}
}
