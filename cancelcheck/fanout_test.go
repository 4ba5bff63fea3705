package cancelcheck

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The fan-out toolkit (issue 23) under systematic cancellation, in the
// three modes of checkAllModes: no slot, token or task may be lost.

var errFail = errors.New("fail")

// expected turns the errors a scenario expects into nil.
func expected(err error, want ...error) error {
	for _, w := range want {
		if errors.Is(err, w) {
			return nil
		}
	}
	return err
}

// A bounded group of 6 children, limit 2, one failing; a watched
// semaphore held by the children; after the group every slot is free.
func TestFanout_BoundedTaskGroup(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		sem := asyncio.NewSemaphore(3)
		w.Semaphore("sem", sem)
		var bg *asyncio.BoundedGroup
		w.checks = append(w.checks, func(*asyncio.T) string {
			if bg != nil && (bg.Free() != bg.Limit() || bg.Running() != 0) {
				return fmt.Sprintf("bounded group: %d of %d slots free, %d running", bg.Free(), bg.Limit(), bg.Running())
			}
			return ""
		})
		err := asyncio.BoundedTaskGroup(t, 2, func(g *asyncio.BoundedGroup) error {
			bg = g
			for i := range 6 {
				if _, err := asyncio.SpawnBoundedErr(g, func(t *asyncio.T) error {
					if err := sem.Acquire(t); err != nil {
						return err
					}
					defer sem.Release()
					if err := asyncio.Sleep(t, time.Duration(i+1)*ms); err != nil {
						return err
					}
					if i == 4 {
						return errFail
					}
					return nil
				}, asyncio.WithName(fmt.Sprint("child", i))); err != nil {
					return err
				}
			}
			return asyncio.Sleep(t, ms)
		})
		return expected(err, errFail)
	}, false)
}

// GatherBounded, GatherBoundedOutcomes and AsCompletedBounded in a row.
func TestFanout_GatherAndAsCompletedBounded(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		mk := func(d time.Duration, fail bool) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, d*ms); err != nil {
					return 0, err
				}
				if fail {
					return 0, errFail
				}
				return int(d), nil
			}
		}
		if _, err := asyncio.GatherBounded(t, 2, mk(3, false), mk(1, false), mk(2, false)); expected(err, errFail) != nil {
			return err
		}
		if _, err := asyncio.GatherBounded(t, 2, mk(3, false), mk(1, true), mk(2, false)); expected(err, errFail) != nil {
			return err
		}
		if _, err := asyncio.GatherBoundedOutcomes(t, 2, mk(2, false), mk(1, true), mk(1, false)); err != nil {
			return err
		}
		for i, o := range asyncio.AsCompletedBounded(t, 2, mk(3, false), mk(1, true), mk(2, false), mk(4, false)) {
			if i < 0 {
				return o.Err
			}
			if i == 2 {
				break
			}
		}
		return asyncio.Sleep(t, ms)
	}, false)
}

// Limiter: weighted waiters on a 100/s, burst 3 bucket; every successful
// acquisition is one grant, none is lost or counted twice, no one is
// left waiting.
func TestFanout_Limiter(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		lim := asyncio.NewLimiter(100, 3)
		successes := int64(0)
		w.checks = append(w.checks, func(*asyncio.T) string {
			st := lim.Stats()
			if lim.Waiters() != 0 || st.Granted != successes || st.Wakeups-st.Refunded > st.Waited {
				return fmt.Sprintf("limiter: %d waiters, stats %+v, %d successes", lim.Waiters(), st, successes)
			}
			return ""
		})
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i := range 4 {
				spawn(g, fmt.Sprint("w", i), func(t *asyncio.T) error {
					for range 2 {
						if err := lim.AcquireN(t, 1+i%3); err != nil {
							return err
						}
						successes++
					}
					return nil
				})
			}
			if err := lim.AcquireN(t, 2); err != nil {
				return err
			}
			successes++
			return nil
		})
	}, false)
}

// Retry inside a Timeout whose deadline stops it; the attempts sleep.
func TestFanout_Retry(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		err := asyncio.Timeout(t, 40*ms, func(*asyncio.TimeoutScope) error {
			_, err := asyncio.Retry(t, asyncio.RetryPolicy{MaxAttempts: 10, Initial: 4 * ms, Rand: asyncio.RandFunc(func() float64 { return 0.5 })},
				func(t *asyncio.T, a asyncio.Attempt) (int, error) {
					if err := asyncio.Sleep(t, 3*ms); err != nil {
						return 0, err
					}
					return 0, errFail
				})
			return err
		})
		return expected(err, asyncio.ErrRetriesExhausted)
	}, true) // only main awaits
}

// Hedge with a fixed delay and FirstSuccess over three replicas.
func TestFanout_HedgeAndFirstSuccess(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		lat := []time.Duration{10 * ms, 2 * ms, 5 * ms}
		v, err := asyncio.Hedge(t, asyncio.HedgePolicy{Delay: 3 * ms, MaxAttempts: 3}, func(t *asyncio.T, i int) (int, error) {
			return i, asyncio.Sleep(t, lat[i])
		})
		if err != nil {
			return err
		}
		if v == 0 {
			return fmt.Errorf("hedge: attempt %d won", v)
		}
		rep := func(d time.Duration, fail bool) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, d); err != nil {
					return 0, err
				}
				if fail {
					return 0, errFail
				}
				return 1, nil
			}
		}
		_, err = asyncio.FirstSuccess(t, rep(3*ms, false), rep(ms, true), rep(2*ms, false))
		return err
	}, false)
}

// StaggeredRace with a delay and with none (delay=None): a failure starts
// the next attempt, the winner cancels the rest.
func TestFanout_StaggeredRace(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		rep := func(d time.Duration, fail bool) func(*asyncio.T) (int, error) {
			return func(t *asyncio.T) (int, error) {
				if err := asyncio.Sleep(t, d); err != nil {
					return 0, err
				}
				if fail {
					return 0, errFail
				}
				return 1, nil
			}
		}
		for _, delay := range []time.Duration{2 * ms, -1} {
			v, i, errs, err := asyncio.StaggeredRace(t, delay, rep(ms, true), rep(10*ms, false), rep(ms, false))
			if err != nil {
				return err
			}
			// One attempt may be cancelled on its own (it then counts
			// as failed), never all: one of the last two wins.
			if v != 1 || i < 1 || len(errs) <= i || errs[i] != nil {
				return fmt.Errorf("staggered race (delay %v): %d %d %v", delay, v, i, errs)
			}
			for j, e := range errs {
				if j != i && e != errFail && !asyncio.IsCancelled(e) {
					return fmt.Errorf("staggered race (delay %v): attempt %d: %v", delay, j, e)
				}
			}
		}
		return nil
	}, false)
}
