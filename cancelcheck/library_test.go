package cancelcheck

import (
	"errors"
	"testing"
	"time"

	"github.com/go-asyncio/asyncio"
)

// The library's own structured code under systematic cancellation: each
// scenario is correct code, so every run must be clean, whether the whole
// operation is cancelled at every moment any of its tasks waits
// (AllTasks+CancelMain) or each task is cancelled at each of its own awaits
// (AllTasks), in debug mode (so a swallowed cancellation inside the library
// would be reported).

var modes = []struct {
	name string
	opts []Option
}{
	{"main", nil},
	{"cancel main at every point", []Option{AllTasks(), CancelMain()}},
	{"cancel each task at each point", []Option{AllTasks()}},
}

func checkAllModes(t *testing.T, fn Func, skipEachTask bool) {
	t.Helper()
	for _, m := range modes {
		if skipEachTask && m.name == "cancel each task at each point" {
			continue
		}
		r := Check(fn, append(m.opts, WithLoopOptions(asyncio.WithDebug()))...)
		if !r.OK() {
			t.Errorf("%s:\n%s", m.name, r)
		}
		if r.Points == 0 {
			t.Errorf("%s: no suspension point", m.name)
		}
	}
}

// spawn starts fn in g, ignoring the result type.
func spawn(g *asyncio.Group, name string, fn func(t *asyncio.T) error) {
	_, _ = asyncio.Spawn(g, func(t *asyncio.T) (struct{}, error) { return struct{}{}, fn(t) }, asyncio.WithName(name))
}

// A TaskGroup whose children sleep, one of them failing: the group
// cancels the others and the parent's body, then returns the
// ExceptionGroup.
func TestLibrary_TaskGroup(t *testing.T) {
	errBoom := errors.New("boom")
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for i := range 3 {
				spawn(g, "sleeper", func(t *asyncio.T) error { return asyncio.Sleep(t, time.Duration(i+1)*ms) })
			}
			spawn(g, "failer", func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 2*ms); err != nil {
					return err
				}
				return errBoom
			})
			spawn(g, "nested", func(t *asyncio.T) error {
				return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
					spawn(g, "inner", func(t *asyncio.T) error { return asyncio.Sleep(t, 5*ms) })
					return asyncio.Sleep(t, ms)
				})
			})
			return asyncio.Sleep(t, 10*ms)
		})
		if errors.Is(err, errBoom) {
			return nil // the expected failure
		}
		return err
	}, false)
}

// Timeouts that expire, nested ones, WaitFor on a task and on a function,
// with a helper task that waits at the very moments the deadlines pass.
func TestLibrary_TimeoutAndWaitFor(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			spawn(g, "ticker", func(t *asyncio.T) error {
				for range 12 {
					if err := asyncio.Sleep(t, ms); err != nil {
						return err
					}
				}
				return nil
			})
			err := asyncio.Timeout(t, 3*ms, func(s *asyncio.TimeoutScope) error {
				return asyncio.Timeout(t, 2*ms, func(s *asyncio.TimeoutScope) error { return asyncio.Sleep(t, 10*ms) })
			})
			if !errors.Is(err, asyncio.ErrTimeout) {
				return err
			}
			slow := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, 10*ms) })
			if _, err := asyncio.WaitFor[int](t, 2*ms, slow); !errors.Is(err, asyncio.ErrTimeout) {
				return err
			}
			if _, err := asyncio.WaitForFunc(t, 2*ms, func(t *asyncio.T) (int, error) {
				return 2, asyncio.Sleep(t, ms)
			}); err != nil {
				return err
			}
			err = asyncio.Timeout(t, asyncio.Never, func(s *asyncio.TimeoutScope) error {
				if err := s.Reschedule(t.Loop().Time() + ms); err != nil {
					return err
				}
				return asyncio.Sleep(t, 5*ms)
			})
			if errors.Is(err, asyncio.ErrTimeout) {
				return nil
			}
			return err
		})
	}, true) // a ticker cancelled alone is fine; the timeouts run in main
}

// Producers and consumers on a bounded queue, joined, then shut down; a
// consumer marks every item done even when cancelled while processing it.
func TestLibrary_Queue(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		q := asyncio.NewQueue[int](2)
		Queue(w, "q", q)
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for range 2 {
				spawn(g, "consumer", func(t *asyncio.T) error {
					for {
						_, err := q.Get(t)
						if errors.Is(err, asyncio.ErrQueueShutDown) {
							return nil
						}
						if err != nil {
							return err
						}
						err = asyncio.Sleep(t, ms)
						_ = q.TaskDone()
						if err != nil {
							return err
						}
					}
				})
			}
			for i := range 5 {
				if err := q.Put(t, i); err != nil {
					return err
				}
			}
			if err := q.Join(t); err != nil {
				return err
			}
			q.Shutdown(false)
			return nil
		})
	}, true) // a consumer cancelled alone leaves Join waiting: correct
}

// Consumers that stop at a sentinel, any of which may be cancelled at any
// await: no wakeup may be lost (a lost one is a deadlock).
func TestLibrary_QueueWakeups(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		q := asyncio.NewQueue[int](1)
		Queue(w, "q", q)
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for range 3 {
				spawn(g, "consumer", func(t *asyncio.T) error {
					for {
						v, err := q.Get(t)
						if err != nil {
							return err
						}
						_ = q.TaskDone()
						if v < 0 {
							return nil
						}
					}
				})
			}
			for i := range 4 {
				if err := q.Put(t, i); err != nil {
					return err
				}
			}
			for range 3 {
				if err := q.Put(t, -1); err != nil {
					return err
				}
			}
			return nil
		})
	}, false)
}

// Contended locks, semaphores, conditions, events and barriers, each user
// releasing what it holds however it ends.
func TestLibrary_Locks(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		lk := asyncio.NewLock()
		w.Lock("lock", lk)
		sem := asyncio.NewSemaphore(2)
		w.Semaphore("sem", sem)
		bsem := asyncio.NewBoundedSemaphore(1)
		w.BoundedSemaphore("bsem", bsem)
		clk := asyncio.NewLock()
		w.Lock("condition's lock", clk)
		cond := asyncio.NewCondition(clk)
		ev := asyncio.NewEvent()
		ready := 0
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			for range 3 {
				spawn(g, "user", func(t *asyncio.T) error {
					if err := lk.Acquire(t); err != nil {
						return err
					}
					err := asyncio.Sleep(t, ms)
					_ = lk.Release()
					if err != nil {
						return err
					}
					if err := sem.Acquire(t); err != nil {
						return err
					}
					err = asyncio.Sleep(t, ms)
					_ = sem.Release()
					if err != nil {
						return err
					}
					if err := bsem.Acquire(t); err != nil {
						return err
					}
					err = asyncio.Sleep(t, 0)
					_ = bsem.Release()
					if err != nil {
						return err
					}
					if err := cond.Acquire(t); err != nil {
						return err
					}
					ready++
					_ = cond.NotifyAll()
					err = cond.WaitFor(t, func() bool { return ready >= 3 || ev.IsSet() })
					_ = cond.Release()
					return err
				})
			}
			// Users wait until all three have arrived; if one of them was
			// cancelled before arriving, the releaser lets the others go.
			spawn(g, "releaser", func(t *asyncio.T) error {
				if err := asyncio.Sleep(t, 20*ms); err != nil {
					return err
				}
				ev.Set()
				if err := cond.Acquire(t); err != nil {
					return err
				}
				defer cond.Release()
				return cond.NotifyAll()
			})
			return nil
		})
	}, false)
}

// Gather and Shield inside a TaskGroup, the shielded work awaited to its
// end even when the waiter is cancelled.
func TestLibrary_GatherAndShield(t *testing.T) {
	checkAllModes(t, func(t *asyncio.T, w *Watch) error {
		return asyncio.TaskGroup(t, func(g *asyncio.Group) error {
			spawn(g, "gatherer", func(t *asyncio.T) error {
				a := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 1, asyncio.Sleep(t, ms) })
				b := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 2, asyncio.Sleep(t, 2*ms) })
				_, err := asyncio.Gather[int](t, a, b).Await(t)
				// Gather cancels its children when cancelled, but returns
				// before they finish: wait for them (as a TaskGroup would).
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				_ = t.Await(a)
				//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
				_ = t.Await(b)
				return err
			})
			spawn(g, "shielder", func(t *asyncio.T) error {
				work := asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 3, asyncio.Sleep(t, 3*ms) })
				_, err := asyncio.Shield[int](work).Await(t)
				if err != nil {
					//asynciovet:ignore droppedcancel test scaffolding: waits for a helper task or value the test checks itself
					_ = t.Await(work) // cleanup: let the shielded work finish
				}
				return err
			})
			return nil
		})
	}, true) // the inner tasks cancelled alone make Gather fail: by design
}
