package asyncio

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Random task trees (eager and scheduled children, nested resumes,
// cancellations, gathers, sleeps, tasks finishing at once and tasks
// pending forever) on loops closed mid-way, from the driver or from
// another goroutine, debug mode on or off: every started task's deferred
// call runs exactly once (at its end or when Close unwinds it), the
// process does not crash, and no goroutine is left.
func TestProbeSwitch_RandomTreesClosedMidway(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	totalStarted, totalUnwound := 0, 0
	for seed := range uint64(120) {
		rng := rand.New(rand.NewPCG(seed, 7))
		l := NewTestLoop()
		l.SetDebug(seed%4 == 0)
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		started, deferred := 0, 0
		var tasks []*Task[int]
		var spawn func(owner LoopOwner, depth int) *Task[int]
		spawn = func(owner LoopOwner, depth int) *Task[int] {
			var opts []TaskOption
			if rng.IntN(3) == 0 {
				opts = append(opts, WithEagerStart())
			}
			kind := rng.IntN(6)
			nkids := 0
			if depth < 3 {
				nkids = rng.IntN(3)
			}
			task := CreateTask(owner, func(tk *T) (int, error) {
				started++
				defer func() { deferred++ }()
				var kids []AwaitableOf[int]
				for range nkids {
					kids = append(kids, spawn(tk, depth+1))
				}
				switch kind {
				case 0:
					return 1, nil
				case 1:
					return 0, Sleep(tk, time.Duration(rng.IntN(3))*time.Second)
				case 2:
					_, err := Gather(tk, kids...).Await(tk)
					return 0, err
				case 3:
					if len(kids) > 0 {
						kids[0].Cancel("c")
					}
					return 0, Sleep(tk, 0)
				case 4:
					_, err := NewFuture[int](tk).Await(tk) // forever
					return 0, err
				}
				for _, k := range kids {
					//asynciovet:ignore droppedcancel random task trees: a parent outlives its children's outcomes, cancellations included, on purpose (what Close then unwinds is the test)
					_, _ = k.Await(tk)
				}
				return 0, nil
			}, opts...)
			tasks = append(tasks, task)
			return task
		}
		main := CreateTask(l, func(tk *T) (int, error) {
			for range 1 + rng.IntN(4) {
				spawn(tk, 0)
			}
			return 0, Sleep(tk, time.Duration(rng.IntN(4))*time.Second)
		})
		if err := l.RunUntilComplete(main); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		pendingAtClose := 0
		for _, tk := range tasks {
			if tk.t.started && !tk.Done() {
				pendingAtClose++
			}
		}
		totalUnwound += pendingAtClose
		totalStarted += started
		if seed%2 == 0 {
			mustClose(t, l)
		} else {
			done := make(chan error)
			go func() { done <- l.Close() }()
			if err := <-done; err != nil {
				t.Fatalf("seed %d: Close: %v", seed, err)
			}
		}
		if deferred != started {
			t.Errorf("seed %d: %d tasks started, %d deferred calls ran", seed, started, deferred)
		}
	}
	if totalStarted < 300 || totalUnwound < 50 {
		t.Errorf("%d tasks started, %d unwound at Close: the trees are too small to mean anything", totalStarted, totalUnwound)
	} else {
		t.Logf("%d tasks started, %d unwound at Close", totalStarted, totalUnwound)
	}
}
