package cancelcheck

// The fan-out toolkit under systematic cancellation, second hostile run:
// nested bounded groups sharing a limiter, AsCompletedBounded abandoned
// early, GatherBoundedOutcomes, a Hedge whose first attempts fail, and
// Retry in a TaskGroup whose sibling fails. Every run must be clean.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

func TestFanoutEdge2_NestedBoundedAsCompletedBreakOutcomes(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		var groups []*asyncio.BoundedGroup
		lim := asyncio.NewLimiter(200, 2)
		w.checks = append(w.checks, func(*asyncio.T) string {
			for _, bg := range groups {
				if bg.Free() != bg.Limit() || bg.Running() != 0 || bg.Queued() != 0 {
					return fmt.Sprintf("bounded group: %d of %d slots free, %d running, %d queued", bg.Free(), bg.Limit(), bg.Running(), bg.Queued())
				}
			}
			if lim.Waiters() != 0 {
				return "limiter waiters"
			}
			return ""
		})
		err := asyncio.BoundedTaskGroup(t, 2, func(g *asyncio.BoundedGroup) error {
			groups = append(groups, g)
			for i := range 3 {
				if _, err := asyncio.SpawnBoundedErr(g, func(t *asyncio.T) error {
					return asyncio.BoundedTaskGroup(t, 2, func(ig *asyncio.BoundedGroup) error {
						groups = append(groups, ig)
						for j := range 3 {
							if _, err := asyncio.SpawnBoundedErr(ig, func(t *asyncio.T) error {
								if err := lim.AcquireN(t, 1+j%2); err != nil {
									return err
								}
								return asyncio.Sleep(t, time.Duration(i+j+1)*ms)
							}); err != nil {
								return err
							}
						}
						return nil
					})
				}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		n := 0
		for _, o := range asyncio.AsCompletedBounded(t, 2,
			func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, 3*ms) },
			func(t *asyncio.T) (int, error) { return 2, asyncio.Sleep(t, ms) },
			func(t *asyncio.T) (int, error) { return 3, asyncio.Sleep(t, 2*ms) },
			func(t *asyncio.T) (int, error) { return 4, asyncio.Sleep(t, 5*ms) },
		) {
			if o.Err != nil {
				return o.Err
			}
			n++
			if n == 2 {
				break
			}
		}
		_, err = asyncio.GatherBoundedOutcomes(t, 1,
			func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, ms) },
			func(t *asyncio.T) (int, error) { return 0, errors.Join(errFail, asyncio.Sleep(t, ms)) },
		)
		return err
	}, false)
}

func TestFanoutEdge2_HedgeFailuresAndRetryInAFailingGroup(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		v, err := asyncio.Hedge(t, asyncio.HedgePolicy{Delay: 2 * ms, MaxAttempts: 4}, func(t *asyncio.T, i int) (int, error) {
			if err := asyncio.Sleep(t, time.Duration(5-i)*ms); err != nil {
				return 0, err
			}
			if i < 2 {
				return 0, errFail
			}
			return i, nil
		})
		if err != nil {
			return err
		}
		if v < 2 { // attempts 0 and 1 fail; 3 wins when 2 is cancelled on its own
			return fmt.Errorf("hedge: attempt %d won", v)
		}
		err = asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			spawn(g, "retry", func(t *asyncio.T) error {
				_, err := asyncio.Retry(t, asyncio.RetryPolicy{MaxAttempts: 5, Initial: 2 * ms, Rand: asyncio.RandFunc(func() float64 { return 0.5 })},
					func(t *asyncio.T, a asyncio.Attempt) (int, error) {
						if err := asyncio.Sleep(t, ms); err != nil {
							return 0, err
						}
						return 0, errFail
					})
				return err
			})
			spawn(g, "sib", func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 3*ms); err != nil {
					return err
				}
				return errors.New("sib")
			})
			return nil
		})
		var eg *asyncio.ExceptionGroup
		if errors.As(err, &eg) {
			return nil
		}
		return err
	}, false)
}
