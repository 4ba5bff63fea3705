//go:build go1.25

package asyncio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// loop.shutdown_default_executor(timeout) (3.12+), in a synctest bubble so
// that the loop's real clock is the bubble's: a job still running after
// the timeout leaves it with asyncio's warning and nil, exactly when the
// timeout expires; the executor is shut down all the same, the job runs
// on and its outcome still comes back. Jobs that finish in time end the
// wait without a warning, and a cancellation of the waiting task is
// returned, not taken for the timeout.
func TestShutdownDefaultExecutorTimeout(t *testing.T) {
	t.Run("jobs still running", func(t *testing.T) {
		logs := captureSlog(t)
		synctest.Test(t, func(t *testing.T) {
			_, err := Run(func(tk *T) (struct{}, error) {
				release := make(chan struct{})
				job := RunInExecutor(tk, func(context.Context) (int, error) { <-release; return 7, nil })
				start := tk.Loop().Time()
				if err := ShutdownDefaultExecutorTimeout(tk, 2*time.Second); err != nil {
					t.Errorf("ShutdownDefaultExecutorTimeout = %v, want nil", err)
				}
				if d := tk.Loop().Time() - start; d != 2*time.Second {
					t.Errorf("returned after %v, want 2s", d)
				}
				if _, err := ToThread(tk, func(context.Context) (int, error) { return 0, nil }); !errors.As(err, new(*RuntimeError)) {
					t.Errorf("ToThread after the shutdown: %v, want the *RuntimeError", err)
				}
				close(release)
				if v, err := job.Await(tk); v != 7 || err != nil {
					t.Errorf("the job: %d, %v", v, err)
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
		got := logs.take()
		if len(got) != 1 || !strings.Contains(got[0], "The executor did not finish joining its threads within 2s") {
			t.Errorf("slog = %q, want one join-timeout warning", got)
		}
	})
	t.Run("jobs done in time", func(t *testing.T) {
		logs := captureSlog(t)
		synctest.Test(t, func(t *testing.T) {
			_, err := Run(func(tk *T) (struct{}, error) {
				_ = RunInExecutor(tk, func(context.Context) (int, error) { time.Sleep(time.Second); return 1, nil })
				start := tk.Loop().Time()
				err := ShutdownDefaultExecutorTimeout(tk, 2*time.Second)
				if d := tk.Loop().Time() - start; err != nil || d != time.Second {
					t.Errorf("ShutdownDefaultExecutorTimeout = %v after %v, want nil after 1s", err, d)
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
		if got := logs.take(); len(got) != 0 {
			t.Errorf("slog = %q, want nothing", got)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		logs := captureSlog(t)
		synctest.Test(t, func(t *testing.T) {
			_, err := Run(func(tk *T) (struct{}, error) {
				release := make(chan struct{})
				defer close(release)
				_ = RunInExecutor(tk, func(context.Context) (int, error) { <-release; return 1, nil })
				waiter := CreateTask(tk, func(wt *T) (struct{}, error) {
					return struct{}{}, ShutdownDefaultExecutorTimeout(wt, 2*time.Second)
				})
				if err := Sleep(tk, time.Second); err != nil {
					return struct{}{}, err
				}
				waiter.Cancel("stop")
				if _, err := waiter.Await(tk); !IsCancelled(err) {
					t.Errorf("the cancelled wait: %v, want its cancellation", err)
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
		if got := logs.take(); len(got) != 0 {
			t.Errorf("slog = %q, want nothing", got)
		}
	})
}
