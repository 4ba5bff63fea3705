package asyncio

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// FuzzLimiterBoundedGroup drives a bounded task group whose children take
// weighted tokens from a Limiter, with failures, cancellations of single
// children and of the whole group at fuzzed moments, and checks the
// invariants after every run: never more than limit children running;
// never more tokens granted by time t than burst + rate*t; the limiter
// serves in request order; a child cancelled while queued never starts;
// at the end no waiter, no slot held, no task left, and every successful
// acquisition counted once.
func FuzzLimiterBoundedGroup(f *testing.F) {
	f.Add([]byte{10, 3, 2, 6, 1, 5, 0, 0, 2, 3, 0, 0, 1, 1, 1, 0, 3, 2, 0, 9, 1, 0, 0, 0, 2, 8, 0, 4})
	f.Add([]byte{1, 1, 1, 4, 1, 1, 0, 0, 1, 1, 0, 2, 1, 1, 2, 0, 1, 1, 0, 0, 0})
	f.Add([]byte{50, 4, 4, 12, 3, 0, 1, 0, 4, 2, 0, 3, 2, 1, 0, 1, 1, 7, 0, 0, 3, 3, 1, 5, 0, 0, 9, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() int {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return int(b)
		}
		rate := float64(next()%50 + 1)
		burst := next()%4 + 1
		limit := next()%4 + 1
		n := next()%12 + 1
		type child struct {
			weight   int
			work     time.Duration
			fail     bool
			cancelAt time.Duration // 0: never
		}
		children := make([]child, n)
		for i := range children {
			children[i] = child{
				weight: next()%burst + 1,
				work:   time.Duration(next()%20) * ms,
				fail:   next()%5 == 0,
			}
			if c := next() % 4; c == 0 {
				children[i].cancelAt = time.Duration(next()%40+1) * ms
			}
		}
		groupCancelAt := time.Duration(0)
		if next()%3 == 0 {
			groupCancelAt = time.Duration(next()%60+1) * ms
		}

		var problems []string
		bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
		_, err := Run(func(tk *T) (struct{}, error) {
			lim := NewLimiter(rate, burst)
			var bg *BoundedGroup
			inFlight, successes := 0, int64(0)
			granted := 0 // tokens granted so far
			reqSeq, grantSeq := 0, 0
			started := make([]bool, n)
			cancelledQueued := make([]bool, n)
			inner := CreateTask(tk, func(tk *T) (struct{}, error) {
				return struct{}{}, BoundedTaskGroup(tk, limit, func(g *BoundedGroup) error {
					bg = g
					for i, c := range children {
						task, err := SpawnBoundedErr(g, func(tk *T) error {
							if cancelledQueued[i] {
								bad("child %d started after it was cancelled while queued", i)
							}
							started[i] = true
							inFlight++
							defer func() { inFlight-- }()
							if inFlight > limit {
								bad("%d children running, limit %d", inFlight, limit)
							}
							my := reqSeq
							reqSeq++
							if err := lim.AcquireN(tk, c.weight); err != nil {
								return err
							}
							successes++
							if my < grantSeq {
								bad("request %d granted after request %d", my, grantSeq)
							}
							grantSeq = my
							granted += c.weight
							if now := tk.Loop().Time(); float64(granted) > float64(burst)+rate*now.Seconds()+1e-6 {
								bad("%d tokens granted by %v (burst %d, rate %v)", granted, now, burst, rate)
							}
							if err := Sleep(tk, c.work); err != nil {
								return err
							}
							if c.fail {
								return errors.New("child failed")
							}
							return nil
						})
						if err != nil {
							return err
						}
						if c.cancelAt > 0 {
							tk.Loop().CallLater(c.cancelAt, func() {
								if !task.Done() && !started[i] {
									cancelledQueued[i] = true
								}
								task.Cancel()
							})
						}
					}
					return nil
				})
			})
			if groupCancelAt > 0 {
				tk.Loop().CallLater(groupCancelAt, func() { inner.Cancel() })
			}
			//asynciovet:ignore droppedcancel the group's outcome depends on the fuzzed failures; the invariants are what is checked
			_ = tk.Await(inner)
			if lim.Waiters() != 0 {
				bad("%d limiter waiters left", lim.Waiters())
			}
			if st := lim.Stats(); st.Granted != successes {
				bad("limiter granted %d, %d acquisitions returned nil", st.Granted, successes)
			}
			if bg != nil && (bg.Free() != limit || bg.Running() != 0) {
				bad("bounded group: %d of %d slots free, %d running", bg.Free(), limit, bg.Running())
			}
			if left := len(AllTasks(tk)); left != 1 {
				bad("%d tasks left", left-1)
			}
			return struct{}{}, nil
		}, WithVirtualTime())
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, p := range problems {
			t.Error(p)
		}
	})
}
