package asyncio

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// Probes of CrossQueue (h5): several producer loops and several consumer
// loops at once, with cancellations landing at random points.

// Three producer loops and two consumer loops share a queue of capacity 2;
// a third of the Puts and Gets are cancelled after a random number of
// yields (before they wait, while they wait, or after they were woken).
// Every item whose Put succeeded is received exactly once, none whose Put
// was cancelled is received, each consumer sees each producer's items in
// the order they were put, and after the last producer's Shutdown(false)
// every consumer ends with ErrQueueShutDown once the queue is drained.
func TestH5_CrossQueueManyLoopsFIFOExactlyOnce(t *testing.T) {
	const producers, consumers, per = 3, 2, 300
	g := NewLoopGroup(WithLoops(producers + consumers))
	defer g.Close()
	q := NewCrossQueue[int](2)
	put := make([][]bool, producers)
	for p := range put {
		put[p] = make([]bool, per)
	}
	var left atomic.Int32
	left.Store(producers)
	var mu sync.Mutex
	got := make([][]int, consumers)
	_, err := RunEach(g, func(tk *T, i int) (int, error) {
		rng := rand.New(rand.NewPCG(uint64(i), 11))
		yieldThenCancel := func(c interface{ Cancel(...string) bool }) error {
			if rng.IntN(3) != 0 {
				return nil
			}
			for j := rng.IntN(4); j > 0; j-- {
				if err := Sleep(tk, 0); err != nil {
					return err
				}
			}
			c.Cancel()
			return nil
		}
		if i < producers {
			for k := 0; k < per; {
				item := i*per + k
				p := CreateTask(tk, func(ct *T) (struct{}, error) { return struct{}{}, q.Put(ct, item) })
				if err := yieldThenCancel(p); err != nil {
					return 0, err
				}
				_, err := p.Await(tk)
				switch {
				case err == nil:
					put[i][k] = true
				case !IsCancelled(err):
					return 0, err
				}
				k++ // a cancelled item is skipped: it must never arrive
			}
			if left.Add(-1) == 0 {
				q.Shutdown(false)
			}
			return 0, nil
		}
		c := i - producers
		for {
			gt := CreateTask(tk, func(ct *T) (int, error) { return q.Get(ct) })
			if err := yieldThenCancel(gt); err != nil {
				return 0, err
			}
			v, err := gt.Await(tk)
			switch {
			case err == nil:
				//asynciovet:ignore blockingcall a test-only mutex held for an append, never across an await
				mu.Lock()
				got[c] = append(got[c], v)
				mu.Unlock()
			case errors.Is(err, ErrQueueShutDown):
				return 0, nil
			case !IsCancelled(err):
				return 0, err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int]int)
	for c, vs := range got {
		last := make([]int, producers)
		for p := range last {
			last[p] = -1
		}
		for _, v := range vs {
			seen[v]++
			p, k := v/per, v%per
			if k <= last[p] {
				t.Errorf("consumer %d got producer %d's item %d after its item %d", c, p, k, last[p])
			}
			last[p] = k
		}
	}
	total := 0
	for p := range put {
		for k, ok := range put[p] {
			want := 0
			if ok {
				want = 1
				total++
			}
			if n := seen[p*per+k]; n != want {
				t.Errorf("producer %d item %d: put %v, received %d times", p, k, ok, n)
			}
		}
	}
	if q.Len() != 0 || total == 0 {
		t.Errorf("left in the queue: %d; items put: %d", q.Len(), total)
	}
}

// The putter side of a closing loop: a Put waiting on a full queue, and
// one woken (a slot promised to it) whose loop closes before it resumed,
// take no slot: the slot goes to the next caller, and their items are not
// put.
func TestH5_PutterOfAClosingLoopTakesNoSlot(t *testing.T) {
	for _, woken := range []bool{false, true} {
		q := NewCrossQueue[int](1)
		if err := q.PutNowait(1); err != nil {
			t.Fatal(err)
		}
		l := NewLoop()
		l.SetExceptionHandler(func(*Loop, ExceptionContext) {})
		//asynciovet:ignore unawaitedtask the task is left pending on purpose: the loop closes while it waits or after its wakeup was queued
		CreateTask(l, func(ct *T) (struct{}, error) { return struct{}{}, q.Put(ct, 2) })
		l.CallSoon(l.Stop)
		if err := l.RunForever(); err != nil {
			t.Fatal(err)
		}
		if woken {
			if v, err := q.GetNowait(); v != 1 || err != nil { // the slot is promised to l's putter
				t.Fatalf("GetNowait: %d, %v", v, err)
			}
		}
		mustClose(t, l)
		if woken {
			if err := q.PutNowait(3); err != nil {
				t.Errorf("the slot promised to the closed loop's putter: PutNowait: %v", err)
			}
		} else if err := q.PutNowait(3); !errors.Is(err, ErrQueueFull) {
			t.Errorf("full queue: PutNowait: %v", err)
		}
		var got []int
		for {
			v, err := q.GetNowait()
			if err != nil {
				break
			}
			got = append(got, v)
		}
		want := []int{1}
		if woken {
			want = []int{3}
		}
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("woken %v: the queue held %v, want %v (the closed loop's item is not put)", woken, got, want)
		}
	}
}
