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

func TestH23_SynctestToThreadSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		v, err := Run(func(tk *T) (int, error) {
			return ToThread(tk, func(ctx context.Context) (int, error) {
				time.Sleep(time.Hour)
				return 7, nil
			})
		})
		if err != nil || v != 7 {
			t.Fatalf("Run = %v, %v", v, err)
		}
		if d := time.Since(start); d != time.Hour {
			t.Errorf("took %v", d)
		}
	})
}

func TestH23_SynctestTimeoutAroundToThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := Run(func(tk *T) (int, error) {
			return WaitForFunc(tk, time.Minute, func(tk *T) (int, error) {
				return ToThread(tk, func(ctx context.Context) (int, error) {
					select {
					case <-ctx.Done():
						return 0, ctx.Err()
					case <-time.After(time.Hour):
						return 1, nil
					}
				})
			})
		})
		var te *TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("Run = %v", err)
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("took %v", d)
		}
	})
}

func TestH23_SynctestRunInExecutorAndTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, err := Run(func(tk *T) (int, error) {
			f := RunInExecutor(tk, func(ctx context.Context) (int, error) {
				time.Sleep(2 * time.Hour)
				return 1, nil
			})
			if err := Sleep(tk, time.Hour); err != nil {
				return 0, err
			}
			if f.Done() {
				return 0, errors.New("done early")
			}
			return f.Await(tk)
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 2*time.Hour {
			t.Errorf("took %v", d)
		}
	})
}

func TestH23_SynctestBoundedGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		v, err := Run(func(tk *T) ([]int, error) {
			return GatherBounded(tk, 2,
				func(tk *T) (int, error) { return 1, Sleep(tk, time.Hour) },
				func(tk *T) (int, error) {
					return ToThread(tk, func(ctx context.Context) (int, error) { time.Sleep(time.Hour); return 2, nil })
				},
				func(tk *T) (int, error) { return 3, Sleep(tk, time.Hour) },
			)
		})
		if err != nil || len(v) != 3 {
			t.Fatal(v, err)
		}
		if d := time.Since(start); d != 2*time.Hour {
			t.Errorf("took %v", d)
		}
	})
}

func TestH23_SynctestLoopGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewLoopGroup(WithLoops(2))
		defer g.Close()
		start := time.Now()
		_, errs := RunEach(g, func(tk *T, i int) (int, error) {
			return i, Sleep(tk, time.Duration(i+1)*time.Hour)
		})
		if errs != nil {
			t.Fatal(errs)
		}
		if d := time.Since(start); d != 2*time.Hour {
			t.Errorf("took %v", d)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestH23_SynctestRunnerOutsideUsedInside(t *testing.T) {
	r := NewRunner()
	r.Loop()
	defer r.Close()
	synctest.Test(t, func(t *testing.T) {
		_, err := RunWith(r, func(tk *T) (int, error) { return 1, nil })
		var re *RuntimeError
		if !errors.As(err, &re) {
			t.Fatalf("RunWith = %v", err)
		}
	})
}

func TestH23_SynctestCallSoonThreadsafeFromBubbleGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, err := Run(func(tk *T) (int, error) {
			l := tk.Loop()
			f := NewFuture[int](tk)
			go func() {
				time.Sleep(time.Hour)
				l.CallSoonThreadsafe(func() { f.SetResult(5) })
			}()
			return f.Await(tk)
		}, WithOutsideGrace(2*time.Hour))
		if err != nil || v != 5 {
			t.Fatal(v, err)
		}
	})
}

func TestH23_SynctestLoopGroupLockedInside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewLoopGroup(WithLoops(2), WithLockOSThread())
		start := time.Now()
		v, err := RunGroup(g, func(tk *T) (int, error) {
			return CallOn(tk, g.Loop(1), func(tk *T) (int, error) { return 3, Sleep(tk, time.Hour) })
		})
		if err != nil || v != 3 {
			t.Fatal(v, err)
		}
		if d := time.Since(start); d != time.Hour {
			t.Errorf("took %v", d)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestH23_SynctestLoopGroupCloseFromGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := NewLoopGroup(WithLoops(2))
		go func() {
			time.Sleep(time.Hour)
			g.Close()
		}()
		_, err := RunEach(g, func(tk *T, i int) (int, error) { return i, Sleep(tk, 2*time.Hour) })
		t.Log("RunEach:", err)
		if err == nil {
			t.Fatal("want an error")
		}
		g.Close()
	})
}

// Closing a loop on the other side of a bubble from where it was created
// resumed its task goroutines (the pooled ones, a pending task's to
// unwind it) from the wrong side: the bubble goroutine waiting on them
// was durably blocked to synctest, which panicked "deadlock: all
// goroutines in bubble are blocked" (or, by luck, the close went
// through). Close is refused there, changing nothing, like RunWith; the
// loop closes where it was created.
func TestH23_SynctestCloseOnTheOtherSideIsRefused(t *testing.T) {
	r := NewRunner()
	if _, err := RunWith(r, func(tk *T) (int, error) { return 1, Sleep(tk, time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	l := NewLoop()
	pending := CreateTask(l, func(tk *T) (int, error) { return 0, Sleep(tk, time.Hour) })
	if err := l.RunUntilComplete(CreateTask(l, func(tk *T) (int, error) { return 0, Sleep(tk, 0) })); err != nil {
		t.Fatal(err)
	}
	g := NewLoopGroup(WithLoops(2))
	if _, err := RunEach(g, func(tk *T, i int) (int, error) { return i, Sleep(tk, time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error) {
		t.Helper()
		var re *RuntimeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "cannot be closed inside") {
			t.Errorf("%s inside the bubble = %v, want a *RuntimeError refusing it", what, err)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		refused("Runner.Close", r.Close())
		refused("Loop.Close", l.Close())
		refused("LoopGroup.Close", g.Close())
	})
	if l.IsClosed() || pending.Done() {
		t.Fatal("the refused Close changed the loop")
	}
	if _, err := RunWith(r, func(tk *T) (int, error) { return 2, nil }); err != nil {
		t.Errorf("the runner after the refused Close: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if err := l.Close(); err != nil || !l.IsClosed() {
		t.Errorf("Loop.Close outside = %v", err)
	}
	if err := g.Close(); err != nil || !g.Loop(0).IsClosed() || !g.Loop(1).IsClosed() {
		t.Errorf("LoopGroup.Close outside = %v", err)
	}
}

// A WithLockOSThread group's Close inside a bubble handed the loops'
// locked goroutines, made outside, a channel made inside, whose close
// there was a fatal error ("close of synctest channel from outside
// bubble"): it is refused too, and the group closes outside.
func TestH23_SynctestLockedGroupCloseInABubbleIsRefused(t *testing.T) {
	g := NewLoopGroup(WithLoops(2), WithLockOSThread())
	if _, err := RunEach(g, func(tk *T, i int) (int, error) { return i, Sleep(tk, time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		var re *RuntimeError
		if err := g.Close(); !errors.As(err, &re) {
			t.Errorf("Close inside the bubble = %v, want a *RuntimeError", err)
		}
	})
	if err := g.Close(); err != nil || !g.Loop(0).IsClosed() || !g.Loop(1).IsClosed() {
		t.Errorf("Close outside = %v", err)
	}
}

// A WithLockOSThread group made outside a bubble and run inside one: each
// loop's RunWith ran on the loop's own goroutine, outside, where nothing
// refused it, and answered through channels made inside (synctest's
// "deadlock: all goroutines in bubble are blocked", then a fatal error in
// the later Close). RunEach and RunGroup refuse it before anything runs,
// as they do a group without locked goroutines, and the group runs
// outside again.
func TestH23_SynctestLockedGroupRunInABubbleIsRefused(t *testing.T) {
	for _, locked := range []bool{true, false} {
		opts := []GroupOption{WithLoops(2)}
		if locked {
			opts = append(opts, WithLockOSThread())
		}
		g := NewLoopGroup(opts...)
		synctest.Test(t, func(t *testing.T) {
			ran := false
			_, err := RunEach(g, func(tk *T, i int) (int, error) { ran = true; return i, nil })
			if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "RunEach: the loop was created outside") || ran {
				t.Errorf("locked=%v: RunEach in the bubble = %v (ran %v), want a RuntimeError before anything runs", locked, err, ran)
			}
			_, err = RunGroup(g, func(tk *T) (int, error) { ran = true; return 1, nil })
			if !errors.Is(err, ErrRuntime) || !strings.Contains(err.Error(), "RunGroup: the loop was created outside") || ran {
				t.Errorf("locked=%v: RunGroup in the bubble = %v (ran %v), want a RuntimeError before anything runs", locked, err, ran)
			}
		})
		if v, err := RunGroup(g, func(tk *T) (int, error) { return 3, Sleep(tk, time.Millisecond) }); err != nil || v != 3 {
			t.Errorf("locked=%v: RunGroup outside = %v, %v", locked, v, err)
		}
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}
}
