//asynciovet:file-ignore droppedcancel the chaos driver yields with Sleep to interleave the children; the main task is never cancelled and every child's outcome is counted

package asyncio

// Hostile probe h29: "a cancelled operation loses nothing, and an
// operation whose effect already happened is never reported as undone".
// Each primitive is driven by a seeded script from the main task of a
// virtual-time loop: children wait on it (some under a Timeout of 0..2ms,
// which expires in the same or a later iteration than their wakeup), the
// driver completes operations synchronously, and cancellations land at
// every phase: on a waiter still waiting, right after its wakeup in the
// same callback, from a callback later in the same iteration, from a
// timer, and as a Cancel withdrawn by Uncancel. At the end nothing may be
// lost or doubled (items, slots, tokens, notifications), every outcome
// reported must match what happened, and after the loop settles no task
// may wait for something that is there (a lost wakeup).

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"
)

// chaos is one scripted run.
type chaos struct {
	t    *testing.T
	rng  *rand.Rand
	tk   *T
	kids []*Task[struct{}]
	n    int
	// timeless: no delay but 0 (a CrossQueue waiter is outside work, which
	// holds a virtual clock still).
	timeless bool
	seed     uint64
}

// ms is n milliseconds, or 0 for a timeless run.
func (c *chaos) ms(n int) time.Duration {
	if c.timeless {
		return 0
	}
	return time.Duration(n) * time.Millisecond
}

func newChaos(t *testing.T, tk *T, seed uint64) *chaos {
	return &chaos{t: t, rng: rand.New(rand.NewPCG(seed, 29)), tk: tk, seed: seed}
}

// errorf reports a failure of the run, naming its seed.
func (c *chaos) errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("seed %d: %s", c.seed, fmt.Sprintf(format, args...))
}

// spawn starts a child running fn.
func (c *chaos) spawn(fn func(t *T) error) {
	c.n++
	c.kids = append(c.kids, startTask(c.tk, fmt.Sprintf("kid%d", c.n), fn))
}

// timed runs op plain, or (one time in three) under a Timeout of 0..2ms.
func (c *chaos) timed(op func(t *T) error) func(t *T) error {
	if c.rng.IntN(3) != 0 {
		return op
	}
	d := c.ms(c.rng.IntN(3))
	return func(t *T) error {
		return Timeout(t, d, func(*TimeoutScope) error { return op(t) })
	}
}

// poke cancels a live child, one of five ways.
func (c *chaos) poke() {
	var live []*Task[struct{}]
	for _, k := range c.kids {
		if !k.Done() {
			live = append(live, k)
		}
	}
	if len(live) == 0 {
		return
	}
	k := live[c.rng.IntN(len(live))]
	l := c.tk.Loop()
	switch c.rng.IntN(5) {
	case 0:
		k.Cancel("poke")
	case 1:
		l.CallSoon(func() { k.Cancel("poke soon") })
	case 2:
		k.Cancel("poke withdrawn")
		k.Uncancel()
	case 3:
		l.CallLater(c.ms(c.rng.IntN(3)), func() { k.Cancel("poke later") })
	case 4:
		l.CallSoon(func() { l.CallSoon(func() { k.Cancel("poke two callbacks on") }) })
	}
}

// yield lets the loop run: one iteration, or a millisecond of virtual time.
func (c *chaos) yield() {
	if c.rng.IntN(4) == 0 {
		Sleep(c.tk, c.ms(1))
		return
	}
	Sleep(c.tk, 0)
}

// settle lets every wakeup, timer and pending cancellation run out.
func (c *chaos) settle() {
	for range 3 {
		for range 100 { // a CrossQueue hands over in two iterations a hop
			Sleep(c.tk, 0)
		}
		Sleep(c.tk, c.ms(5))
	}
}

// finish cancels every child still running and waits for all of them.
func (c *chaos) finish() {
	for _, k := range c.kids {
		k.Cancel("finish")
	}
	awaitAll(c.tk, c.kids...)
}

// chaosSeeds is how many scripts each probe runs.
const chaosSeeds = 300

// runChaos runs body once per seed, each on a fresh virtual-time loop
// (H29SEED=n in the environment runs seed n alone, to study a failure).
func runChaos(t *testing.T, body func(c *chaos) error) {
	t.Helper()
	for seed := range uint64(chaosSeeds) {
		if only := os.Getenv("H29SEED"); only != "" && only != fmt.Sprint(seed) {
			continue
		}
		_, err := Run(func(tk *T) (struct{}, error) {
			return struct{}{}, body(newChaos(t, tk, seed))
		}, WithVirtualTime())
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// ---- Queue, LifoQueue, PriorityQueue

func TestH29_QueueChaosLosesNothing(t *testing.T) {
	kinds := []struct {
		name string
		mk   func(maxsize int) *Queue[int]
	}{
		{"Queue", NewQueue[int]},
		{"LifoQueue", NewLifoQueue[int]},
		{"PriorityQueue", func(m int) *Queue[int] { return NewPriorityQueue(m, func(a, b int) bool { return a < b }) }},
	}
	for _, kind := range kinds {
		for _, maxsize := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s/maxsize=%d", kind.name, maxsize), func(t *testing.T) {
				runChaos(t, func(c *chaos) error { return queueChaos(c, kind.mk(maxsize)) })
			})
		}
	}
}

func queueChaos(c *chaos, q *Queue[int]) error {
	next := 0
	putOK := map[int]bool{}  // items a Put or PutNowait reported put
	putErr := map[int]bool{} // items a Put reported not put
	got := map[int]int{}     // item -> times a Get or GetNowait returned it
	discarded := map[int]bool{}
	inGet, inPut := 0, 0
	take := func(v int) {
		got[v]++
		if got[v] > 1 {
			c.errorf("item %d returned %d times", v, got[v])
		}
	}
	for step := 0; step < 40; step++ {
		switch r := c.rng.IntN(12); {
		case r < 3:
			c.spawn(c.timed(func(t *T) error {
				inGet++
				v, err := q.Get(t)
				inGet--
				if err == nil {
					take(v)
				}
				return err
			}))
		case r < 6:
			next++
			v := next
			c.spawn(c.timed(func(t *T) error {
				inPut++
				err := q.Put(t, v)
				inPut--
				if err == nil {
					putOK[v] = true
				} else {
					putErr[v] = true
				}
				return err
			}))
		case r < 7:
			next++
			if q.PutNowait(next) == nil {
				putOK[next] = true
			}
		case r < 8:
			if v, err := q.GetNowait(); err == nil {
				take(v)
			}
		case r < 10:
			c.poke()
		default:
			c.yield()
		}
		if step == 35 && c.rng.IntN(4) == 0 {
			immediate := c.rng.IntN(2) == 0
			if immediate {
				for _, v := range q.store.items() {
					discarded[v] = true
				}
			}
			q.Shutdown(immediate)
		}
	}
	c.settle()
	if inGet > 0 && !q.Empty() {
		c.errorf("%d getters wait on a queue holding %d items: %v", inGet, q.Len(), q)
	}
	if inPut > 0 && !q.Full() && !q.isShutdown {
		c.errorf("%d putters wait on a queue with room: %v", inPut, q)
	}
	c.finish()
	for !q.Empty() {
		v, _ := q.GetNowait()
		take(v)
	}
	for v := range putOK {
		if got[v] == 0 && !discarded[v] {
			c.errorf("item %d was put and is gone", v)
		}
	}
	for v := range got {
		if !putOK[v] {
			c.errorf("item %d came out but its Put reported failure (%v)", v, putErr[v])
		}
	}
	return nil
}

// ---- Lock, Semaphore, BoundedSemaphore

func TestH29_LockChaosLosesNoHandOff(t *testing.T) {
	runChaos(t, func(c *chaos) error {
		lk := NewLock()
		return lockerChaos(c, lk, 1, func() int {
			if lk.Locked() {
				return 0
			}
			return 1
		})
	})
}

func TestH29_SemaphoreChaosLosesNoSlot(t *testing.T) {
	for _, value := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(value), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				s := NewSemaphore(value)
				return lockerChaos(c, s, value, func() int { return s.value })
			})
		})
	}
}

func TestH29_BoundedSemaphoreChaosLosesNoSlot(t *testing.T) {
	for _, value := range []int{1, 2} {
		t.Run(fmt.Sprint(value), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				s := NewBoundedSemaphore(value)
				return lockerChaos(c, s, value, func() int { return s.sem.value })
			})
		})
	}
}

// lockerChaos has children acquire lk (capacity slots), hold it a few
// iterations and release it; free reports the slots free now.
func lockerChaos(c *chaos, lk Locker, capacity int, free func() int) error {
	holders, waiting := 0, 0
	for step := 0; step < 40; step++ {
		switch r := c.rng.IntN(10); {
		case r < 5:
			hold := c.rng.IntN(3)
			withLock := c.rng.IntN(2) == 0
			c.spawn(c.timed(func(t *T) error {
				body := func() error {
					holders++
					if holders > capacity {
						c.errorf("%d holders of a lock of %d slots", holders, capacity)
					}
					defer func() { holders-- }()
					for range hold {
						if err := Sleep(t, 0); err != nil {
							return err
						}
					}
					return nil
				}
				waiting++
				if withLock {
					entered := false
					err := WithLock(t, lk, func() error {
						waiting--
						entered = true
						return body()
					})
					if !entered {
						waiting--
					}
					return err
				}
				err := lk.Acquire(t)
				waiting--
				if err != nil {
					return err
				}
				defer func() {
					if err := lk.Release(); err != nil {
						c.errorf("Release: %v", err)
					}
				}()
				return body()
			}))
		case r < 8:
			c.poke()
		default:
			c.yield()
		}
	}
	c.settle()
	if waiting > 0 && free() > 0 {
		c.errorf("%d tasks wait while %d slots are free: %v", waiting, free(), lk)
	}
	c.finish()
	if holders != 0 || free() != capacity {
		c.errorf("after every task ended: %d holders, %d of %d slots free: %v", holders, free(), capacity, lk)
	}
	return nil
}

// ---- Condition

func TestH29_ConditionChaosLosesNoNotification(t *testing.T) {
	runChaos(t, func(c *chaos) error {
		cond := NewCondition(nil)
		count, produced, consumed, waiting := 0, 0, 0, 0
		for step := 0; step < 40; step++ {
			switch r := c.rng.IntN(10); {
			case r < 4:
				c.spawn(c.timed(func(t *T) error {
					if err := cond.Acquire(t); err != nil {
						return err
					}
					defer cond.Release()
					waiting++
					err := cond.WaitFor(t, func() bool { return count > 0 })
					waiting--
					if err != nil {
						return err
					}
					count--
					consumed++
					return nil
				}))
			case r < 6:
				if err := cond.Acquire(c.tk); err != nil {
					return err
				}
				count++
				produced++
				_ = cond.Notify(1)
				_ = cond.Release()
			case r < 8:
				c.poke()
			default:
				c.yield()
			}
		}
		c.settle()
		if waiting > 0 && count > 0 {
			c.errorf("%d consumers wait while %d items are there (a lost notification): %v", waiting, count, cond)
		}
		c.finish()
		if consumed+count != produced || cond.Locked() {
			c.errorf("produced %d, consumed %d, left %d, locked %v", produced, consumed, count, cond.Locked())
		}
		return nil
	})
}

// ---- Limiter

func TestH29_LimiterChaosLosesNoToken(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		burst int
	}{{0, 1}, {0, 3}, {1000, 1}, {1000, 3}} {
		t.Run(fmt.Sprintf("rate=%v/burst=%d", tc.rate, tc.burst), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				// Rate 0 is a fixed budget: every token is counted. At
				// 1000 tokens a second (one a millisecond of virtual time)
				// the refills race the grants and the refunds.
				lim := NewLimiter(tc.rate, tc.burst)
				start := c.tk.Loop().Time()
				taken, grants := 0, 0
				for step := 0; step < 40; step++ {
					switch r := c.rng.IntN(10); {
					case r < 5:
						k := 1 + c.rng.IntN(tc.burst)
						c.spawn(c.timed(func(t *T) error {
							err := lim.AcquireN(t, k)
							if err == nil {
								taken += k
								grants++
							}
							return err
						}))
					case r < 6:
						if lim.TryAcquire(c.tk, 1) {
							taken++
							grants++
						}
					case r < 8:
						c.poke()
					default:
						c.yield()
					}
				}
				c.settle()
				if e := lim.waiters.Front(); e != nil && float64(e.Value.(*limiterWaiter).k) <= lim.Tokens() {
					c.errorf("the first waiter wants %d tokens and %v are there: %v", e.Value.(*limiterWaiter).k, lim.Tokens(), lim)
				}
				c.finish()
				if st := lim.Stats(); st.Granted != int64(grants) {
					c.errorf("Stats().Granted %d, %d acquisitions succeeded (refunded %d)", st.Granted, grants, st.Refunded)
				}
				if tc.rate == 0 && float64(taken)+lim.Tokens() != float64(tc.burst) {
					c.errorf("burst %d: %d tokens taken, %v left", tc.burst, taken, lim.Tokens())
				}
				elapsed := float64(c.tk.Loop().Time()-start) / 1e9
				if max := float64(tc.burst) + tc.rate*elapsed; float64(taken) > max+1e-6 {
					c.errorf("%d tokens taken in %vs, at most %v can be", taken, elapsed, max)
				}
				return nil
			})
		})
	}
}

// ---- BoundedTaskGroup

func TestH29_BoundedGroupChaosLosesNoSlot(t *testing.T) {
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				running := 0
				var bg *BoundedGroup
				err := BoundedTaskGroup(c.tk, limit, func(g *BoundedGroup) error {
					bg = g
					for step := 0; step < 30; step++ {
						switch r := c.rng.IntN(10); {
						case r < 5:
							hold := c.rng.IntN(3)
							task, err := SpawnBoundedErr(g, func(t *T) error {
								running++
								defer func() { running-- }()
								if running > limit {
									c.errorf("%d children run in a group of limit %d", running, limit)
								}
								for range hold {
									if err := Sleep(t, 0); err != nil {
										return err
									}
								}
								return nil
							})
							if err != nil {
								return err
							}
							c.kids = append(c.kids, task)
						case r < 8:
							c.poke()
						default:
							c.yield()
						}
					}
					c.settle()
					if g.Queued() > 0 && g.Free() > 0 {
						c.errorf("%d children queued while %d slots are free: %v", g.Queued(), g.Free(), g)
					}
					return nil
				})
				if err != nil {
					return err
				}
				if bg.busy != 0 || bg.Queued() != 0 || running != 0 {
					c.errorf("after the group: %d slots held, %d queued, %d running", bg.busy, bg.Queued(), running)
				}
				return nil
			})
		})
	}
}

// ---- CrossQueue, on one loop (the orderings within an iteration)

func TestH29_CrossQueueChaosLosesNothing(t *testing.T) {
	for _, capacity := range []int{1, 2} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				c.timeless = true
				q := NewCrossQueue[int](capacity)
				next := 0
				putOK, putErr, got := map[int]bool{}, map[int]bool{}, map[int]int{}
				discarded := map[int]bool{}
				inGet, inPut, shut := 0, 0, false
				take := func(v int) {
					got[v]++
					if got[v] > 1 {
						c.errorf("item %d returned %d times", v, got[v])
					}
				}
				for step := 0; step < 40; step++ {
					switch r := c.rng.IntN(12); {
					case r < 3:
						c.spawn(c.timed(func(t *T) error {
							inGet++
							v, err := q.Get(t)
							inGet--
							if err == nil {
								take(v)
							}
							return err
						}))
					case r < 6:
						next++
						v := next
						c.spawn(c.timed(func(t *T) error {
							inPut++
							err := q.Put(t, v)
							inPut--
							if err == nil {
								putOK[v] = true
							} else {
								putErr[v] = true
							}
							return err
						}))
					case r < 7:
						next++
						if q.PutNowait(next) == nil {
							putOK[next] = true
						}
					case r < 8:
						if v, err := q.GetNowait(); err == nil {
							take(v)
						}
					case r < 10:
						c.poke()
					default:
						c.yield()
					}
					if step == 35 && c.rng.IntN(4) == 0 {
						immediate := c.rng.IntN(2) == 0
						if immediate {
							q.mu.Lock()
							for i := range q.n {
								discarded[q.items[(q.head+i)%len(q.items)]] = true
							}
							q.mu.Unlock()
						}
						q.Shutdown(immediate)
						shut = true
					}
				}
				c.settle()
				if inGet > 0 && q.Len() > 0 {
					c.errorf("%d getters wait on a queue holding %d items promised items %d slots %d getters %d putters %d", inGet, q.Len(), q.promisedItems, q.promisedSlots, len(q.getters), len(q.putters))
				}
				if inPut > 0 && q.Len() < capacity && !shut {
					c.errorf("%d putters wait on a queue with room (%d of %d) promised items %d slots %d getters %d putters %d", inPut, q.Len(), capacity, q.promisedItems, q.promisedSlots, len(q.getters), len(q.putters))
				}
				c.finish()
				for {
					v, err := q.GetNowait()
					if err != nil {
						break
					}
					take(v)
				}
				if q.promisedItems != 0 || q.promisedSlots != 0 || len(q.getters)+len(q.putters) != 0 {
					c.errorf("after every task ended: promised %d items, %d slots; %d getters, %d putters listed",
						q.promisedItems, q.promisedSlots, len(q.getters), len(q.putters))
				}
				for v := range putOK {
					if got[v] == 0 && !discarded[v] {
						c.errorf("item %d was put and is gone", v)
					}
				}
				for v := range got {
					if !putOK[v] {
						c.errorf("item %d came out but its Put reported failure (%v)", v, putErr[v])
					}
				}
				return nil
			})
		})
	}
}

// ---- Go channels (Recv and Send, whose helpers run on goroutines; no
// close: closing a channel a send may be pending on is a data race in Go)

func TestH29_ChanChaosLosesNothing(t *testing.T) {
	for _, buffer := range []int{0, 1} {
		t.Run(fmt.Sprint(buffer), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				c.timeless = true // the helpers are outside work
				ch := make(chan int, buffer)
				next := 0
				sentOK, sentErr, got := map[int]bool{}, map[int]bool{}, map[int]int{}
				take := func(v int) {
					got[v]++
					if got[v] > 1 {
						c.errorf("value %d received %d times", v, got[v])
					}
				}
				for step := 0; step < 30; step++ {
					switch r := c.rng.IntN(10); {
					case r < 3:
						c.spawn(c.timed(func(t *T) error {
							v, ok, err := Recv(t, ch)
							if err == nil && ok {
								take(v)
							}
							return err
						}))
					case r < 6:
						next++
						v := next
						c.spawn(c.timed(func(t *T) error {
							err := Send(t, ch, v)
							if err == nil {
								sentOK[v] = true
							} else {
								sentErr[v] = true
							}
							return err
						}))
					case r < 8:
						c.poke()
					default:
						c.yield()
					}
				}
				c.finish()
			drain:
				for {
					select {
					case v := <-ch:
						take(v)
					default:
						break drain
					}
				}
				for v := range sentOK {
					if got[v] == 0 {
						c.errorf("value %d was sent and is gone", v)
					}
				}
				for v := range got {
					if !sentOK[v] {
						c.errorf("value %d was received but its Send reported failure (%v)", v, sentErr[v])
					}
				}
				return nil
			})
		})
	}
}

// ---- Barrier

func TestH29_BarrierChaosLeavesNothingBehind(t *testing.T) {
	for _, parties := range []int{2, 3} {
		t.Run(fmt.Sprint(parties), func(t *testing.T) {
			runChaos(t, func(c *chaos) error {
				b := NewBarrier(parties)
				passed, inWait := 0, 0
				for step := 0; step < 40; step++ {
					switch r := c.rng.IntN(10); {
					case r < 5:
						c.spawn(c.timed(func(t *T) error {
							inWait++
							_, err := b.Wait(t)
							inWait--
							if err == nil {
								passed++
							}
							return err
						}))
					case r < 8:
						c.poke()
					default:
						c.yield()
					}
				}
				c.settle()
				if inWait >= parties && b.state == barrierFilling {
					c.errorf("%d tasks wait at a filling barrier of %d parties: %v", inWait, parties, b)
				}
				c.finish()
				if b.count != 0 || b.cond.Locked() || b.cond.waiters.len() != 0 || b.cond.lock.waiters.len() != 0 {
					c.errorf("after every task ended: %v, count %d, locked %v", b, b.count, b.cond.Locked())
				}
				return nil
			})
		})
	}
}

// ---- CrossQueue between two loops

// Two loops run a chaos script each against one CrossQueue (putters,
// getters, PutNowait and GetNowait, cancellations of every kind, a
// Shutdown near the end): every item a Put reported put is received
// exactly once or is still in the queue, none whose Put failed is, and
// nothing stays promised once every task has ended.
func TestH29_CrossQueueTwoLoopsChaosLosesNothing(t *testing.T) {
	for seed := range uint64(60) {
		q := NewCrossQueue[int](2)
		var mu sync.Mutex
		putOK, putErr, got := map[int]bool{}, map[int]bool{}, map[int]int{}
		discarded := map[int]bool{}
		record := func(m map[int]bool, v int) {
			mu.Lock()
			m[v] = true
			mu.Unlock()
		}
		take := func(v int) {
			mu.Lock()
			got[v]++
			mu.Unlock()
		}
		g := NewLoopGroup(WithLoops(2), WithGroupLoopOptions(WithVirtualTime()))
		_, err := RunEach(g, func(tk *T, i int) (struct{}, error) {
			c := newChaos(t, tk, seed*2+uint64(i))
			c.timeless = true
			next := i * 1000
			for step := 0; step < 40; step++ {
				switch r := c.rng.IntN(12); {
				case r < 3:
					c.spawn(c.timed(func(t *T) error {
						v, err := q.Get(t)
						if err == nil {
							take(v)
						}
						return err
					}))
				case r < 6:
					next++
					v := next
					c.spawn(c.timed(func(t *T) error {
						err := q.Put(t, v)
						if err == nil {
							record(putOK, v)
						} else {
							record(putErr, v)
						}
						return err
					}))
				case r < 7:
					next++
					if q.PutNowait(next) == nil {
						record(putOK, next)
					}
				case r < 8:
					if v, err := q.GetNowait(); err == nil {
						take(v)
					}
				case r < 10:
					c.poke()
				default:
					c.yield()
				}
				if i == 0 && step == 35 && c.rng.IntN(4) == 0 {
					immediate := c.rng.IntN(2) == 0
					//asynciovet:ignore blockingcall the queue's own mutex, held for a few reads (white box), never across an await
					q.mu.Lock() // the items an immediate Shutdown discards
					if immediate {
						for k := range q.n {
							discarded[q.items[(q.head+k)%len(q.items)]] = true
						}
					}
					q.mu.Unlock()
					q.Shutdown(immediate)
				}
			}
			c.finish()
			return struct{}{}, nil
		})
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for {
			v, err := q.GetNowait()
			if err != nil {
				break
			}
			take(v)
		}
		if q.promisedItems != 0 || q.promisedSlots != 0 || len(q.getters)+len(q.putters) != 0 {
			t.Errorf("seed %d: after every task ended: promised %d items, %d slots; %d getters, %d putters listed",
				seed, q.promisedItems, q.promisedSlots, len(q.getters), len(q.putters))
		}
		if seed == 0 {
			t.Logf("seed 0: %d items put, %d failed, %d received, %d discarded", len(putOK), len(putErr), len(got), len(discarded))
		}
		for v := range putOK {
			if got[v] == 0 && !discarded[v] {
				t.Errorf("seed %d: item %d was put and is gone", seed, v)
			}
		}
		for v, n := range got {
			if !putOK[v] || n > 1 {
				t.Errorf("seed %d: item %d came out %d times; its Put reported success %v", seed, v, n, putOK[v])
			}
		}
	}
}
