package asyncio

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var reprAddr = regexp.MustCompile(` at 0x[0-9a-f]+`)

// repr normalises a String() for comparison with CPython's repr: the
// address becomes ADDR.
func repr(s fmt.Stringer) string {
	return reprAddr.ReplaceAllString(s.String(), " at ADDR")
}

// The String() of every synchronisation primitive and queue follows
// asyncio's __repr__ (locks.py: `<… object at 0x… [locked|unlocked|set|unset
// (, value:N)(, waiters:N)]>`, Barrier `[state(, waiters:n/parties)]`;
// queues.py: `<Queue at 0x… maxsize=N( _queue=[…])( _getters[N])(
// _putters[N])( tasks=N)( shutdown)>`). The expected lines are CPython
// 3.11's output for the same sequence of operations (waiters counted as
// asyncio counts them: a woken waiter stays in _waiters until it runs),
// plus 3.13's " shutdown".
func TestREPR_LocksAndQueuesMatchAsyncio(t *testing.T) {
	var out []string
	add := func(s fmt.Stringer) { out = append(out, repr(s)) }
	runVirtual(t, func(at *T) error {
		yield := func() { Sleep(at, 0) }
		spawn := func(fn func(t *T) error) {
			CreateTask(at, func(t *T) (struct{}, error) { return struct{}{}, fn(t) })
		}

		lk := NewLock()
		add(lk)
		lk.Acquire(at)
		add(lk)
		for range 2 {
			spawn(lk.Acquire)
		}
		yield()
		add(lk)
		lk.Release()
		add(lk)
		yield()
		add(lk)
		lk.Release()
		yield()
		lk.Release()
		add(lk)

		ev := NewEvent()
		add(ev)
		for range 2 {
			spawn(ev.Wait)
		}
		yield()
		add(ev)
		ev.Set()
		add(ev)
		yield()
		add(ev)

		sem := NewSemaphore(2)
		add(sem)
		sem.Acquire(at)
		add(sem)
		sem.Acquire(at)
		add(sem)
		spawn(sem.Acquire)
		yield()
		add(sem)
		sem.Release()
		yield()
		add(sem)
		bs := NewBoundedSemaphore(1)
		add(bs)

		c := NewCondition(nil)
		add(c)
		c.Acquire(at)
		add(c)
		spawn(func(t *T) error {
			if err := c.Acquire(t); err != nil {
				return err
			}
			defer c.Release()
			return c.Wait(t)
		})
		c.Release()
		yield()
		add(c)
		c.Acquire(at)
		c.Notify(1)
		add(c)
		c.Release()
		yield()
		yield()
		add(c)

		b := NewBarrier(3)
		add(b)
		var waiters []Awaitable
		for range 2 {
			waiters = append(waiters, CreateTask(at, func(t *T) (int, error) { return b.Wait(t) }))
		}
		yield()
		add(b)
		b.Abort()
		add(b)
		for _, w := range waiters {
			at.Await(w)
		}
		b.Reset()
		add(b)

		add(NewQueue[int](0))
		add(NewLifoQueue[int](2))
		add(NewPriorityQueue[int](1, func(a, b int) bool { return a < b }))
		q := NewQueue[int](1)
		for range 2 {
			CreateTask(at, func(t *T) (int, error) { return q.Get(t) })
		}
		yield()
		add(q)
		q.PutNowait(7)
		yield()
		add(q)
		q.PutNowait(8)
		add(q)
		spawn(func(t *T) error { return q.Put(t, 9) })
		yield()
		add(q)
		q.Shutdown(false)
		add(q)
		full := NewQueue[int](1)
		full.PutNowait(1)
		spawn(func(t *T) error { return full.Put(t, 2) })
		yield()
		add(full)
		lifo := NewLifoQueue[int](2)
		lifo.PutNowait(5)
		add(lifo)
		prio := NewPriorityQueue[int](0, func(a, b int) bool { return a < b })
		prio.PutNowait(6)
		add(prio)
		return nil
	})
	want := []string{
		"<asyncio.locks.Lock object at ADDR [unlocked]>",
		"<asyncio.locks.Lock object at ADDR [locked]>",
		"<asyncio.locks.Lock object at ADDR [locked, waiters:2]>",
		"<asyncio.locks.Lock object at ADDR [unlocked, waiters:2]>",
		"<asyncio.locks.Lock object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Lock object at ADDR [unlocked]>",
		"<asyncio.locks.Event object at ADDR [unset]>",
		"<asyncio.locks.Event object at ADDR [unset, waiters:2]>",
		"<asyncio.locks.Event object at ADDR [set, waiters:2]>",
		"<asyncio.locks.Event object at ADDR [set]>",
		"<asyncio.locks.Semaphore object at ADDR [unlocked, value:2]>",
		"<asyncio.locks.Semaphore object at ADDR [unlocked, value:1]>",
		"<asyncio.locks.Semaphore object at ADDR [locked]>",
		"<asyncio.locks.Semaphore object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Semaphore object at ADDR [locked]>",
		"<asyncio.locks.BoundedSemaphore object at ADDR [unlocked, value:1]>",
		"<asyncio.locks.Condition object at ADDR [unlocked]>",
		"<asyncio.locks.Condition object at ADDR [locked]>",
		"<asyncio.locks.Condition object at ADDR [unlocked, waiters:1]>",
		"<asyncio.locks.Condition object at ADDR [locked, waiters:1]>",
		"<asyncio.locks.Condition object at ADDR [unlocked]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:0/3]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:2/3]>",
		"<asyncio.locks.Barrier object at ADDR [broken]>",
		"<asyncio.locks.Barrier object at ADDR [filling, waiters:0/3]>",
		"<Queue at ADDR maxsize=0>",
		"<LifoQueue at ADDR maxsize=2>",
		"<PriorityQueue at ADDR maxsize=1>",
		"<Queue at ADDR maxsize=1 _getters[2]>",
		"<Queue at ADDR maxsize=1 _getters[1] tasks=1>",
		"<Queue at ADDR maxsize=1 _queue=[8] tasks=2>",
		"<Queue at ADDR maxsize=1 _queue=[9] tasks=3>",
		"<Queue at ADDR maxsize=1 _queue=[9] tasks=3 shutdown>",
		"<Queue at ADDR maxsize=1 _queue=[1] _putters[1] tasks=1>",
		"<LifoQueue at ADDR maxsize=2 _queue=[5] tasks=1>",
		"<PriorityQueue at ADDR maxsize=0 _queue=[6] tasks=1>",
	}
	if d := cmp.Diff(want, out); d != "" {
		t.Fatal(d)
	}
}
