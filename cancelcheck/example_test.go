package cancelcheck_test

import (
	"fmt"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/cancelcheck"
)

// transfer holds a lock across two awaits, and forgets to release it when
// it is cancelled at the second one. Check cancels it at each of its three
// suspension points and finds the bug at the second.
func Example() {
	transfer := func(t *asyncio.T, w *cancelcheck.Watch) error {
		lk := asyncio.NewLock()
		w.Lock("accounts", lk)
		if err := asyncio.Sleep(t, time.Millisecond); err != nil { // point 1
			return err
		}
		if err := lk.Acquire(t); err != nil {
			return err
		}
		if err := asyncio.Sleep(t, time.Millisecond); err != nil { // point 2
			return err // BUG: lk stays locked
		}
		_ = lk.Release()
		return asyncio.Sleep(t, 0) // point 3
	}
	r := cancelcheck.Check(transfer)
	fmt.Println("points:", r.Points, "ok:", r.OK())
	for _, run := range r.Runs {
		fmt.Println(run.Point, run.Outcome, run.Problems())
	}
	// Output:
	// points: 3 ok: false
	// 0 completed []
	// 1 cancelled []
	// 2 cancelled [Lock "accounts" left held]
	// 3 cancelled []
}
