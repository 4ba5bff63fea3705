//go:build go1.25

package asyncio

import (
	"context"
	"errors"
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
		t.Log(err)
		if err := r.Close(); err != nil {
			t.Fatalf("Close in bubble = %v", err)
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

func TestH23_SynctestLoopGroupOutsideRunInside(t *testing.T) {
	g := NewLoopGroup(WithLoops(2))
	defer g.Close()
	synctest.Test(t, func(t *testing.T) {
		_, err := RunEach(g, func(tk *T, i int) (int, error) { return i, nil })
		t.Log("RunEach:", err)
		if err == nil {
			t.Fatal("want an error")
		}
		_, err = RunGroup(g, func(tk *T) (int, error) { return 1, nil })
		t.Log("RunGroup:", err)
		if err == nil {
			t.Fatal("want an error")
		}
	})
	if _, err := RunEach(g, func(tk *T, i int) (int, error) { return i, nil }); err != nil {
		t.Fatal(err)
	}
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
