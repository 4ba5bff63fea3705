// Package h48_funcvalues: method values, method expressions, closures kept
// in struct fields and maps and called later, awaits through interfaces.
package h48_funcvalues

import (
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
)

// Method value of an await, called right away: a call through a function
// value, not followed (a documented miss).
func methodValue(t *asyncio.T, lk *asyncio.Lock) error {
	acquire := lk.Acquire
	acquire(t)
	return lk.Release()
}

// Method expression of an await.
func methodExpr(t *asyncio.T, lk *asyncio.Lock) error {
	(*asyncio.Lock).Acquire(lk, t) // want `droppedcancel: the error of asyncio\.Lock\.Acquire is`
	return lk.Release()
}

func methodExprChecked(t *asyncio.T, lk *asyncio.Lock) error {
	if err := (*asyncio.Lock).Acquire(lk, t); err != nil {
		return err
	}
	return lk.Release()
}

// Await through the library's interface.
func throughLocker(t *asyncio.T, lk asyncio.Locker) error {
	lk.Acquire(t) // want `droppedcancel: the error of asyncio\.Locker\.Acquire is`
	defer lk.Release()
	return nil
}

// Await through AwaitableOf.
func throughAwaitable(t *asyncio.T, aw asyncio.AwaitableOf[int]) int {
	v, _ := aw.Await(t) // want `droppedcancel: the error of asyncio\.AwaitableOf\.Await is`
	return v
}

// An interface of the program: a user coroutine is not an await for
// droppedcancel (documented).
type sleeper interface{ Nap(t *asyncio.T) error }

func throughUserIface(t *asyncio.T, s sleeper) {
	s.Nap(t)
}

// Handlers kept in a map and a struct field, called later by the task
// itself with its own handle.
type server struct {
	onTick   func(t *asyncio.T) error
	handlers map[string]func(t *asyncio.T) error
	mu       sync.Mutex
	n        int
}

func (s *server) run(t *asyncio.T) error {
	s.handlers = map[string]func(*asyncio.T) error{
		"nap": func(h *asyncio.T) error { return asyncio.Sleep(h, time.Millisecond) },
	}
	s.onTick = func(h *asyncio.T) error { return asyncio.Sleep(h, time.Millisecond) }
	if err := s.handlers["nap"](t); err != nil {
		return err
	}
	return s.onTick(t)
}

// Blocking closures in a field: called through a function value, a miss
// by design.
func (s *server) blockingField(t *asyncio.T) {
	s.onTick = func(*asyncio.T) error { time.Sleep(time.Millisecond); return nil } // want `blockingcall: time\.Sleep inside a task blocks`
	nap := time.Sleep
	nap(time.Millisecond) // a function value: a documented miss
}

// A method value of a blocking helper given as a callback.
func (s *server) flush() { time.Sleep(time.Millisecond) } // want flush:`blocks: calls time\.Sleep`

func (s *server) callbacks(t *asyncio.T) {
	t.Loop().CallSoon(s.flush) // want `blockingcall: h48_funcvalues\.server\.flush, given to asyncio\.Loop\.CallSoon, blocks`
	f := s.flush
	t.Loop().CallSoon(f) // through a variable: a documented miss
	t.Loop().CallSoon((*server).flushNow(s))
}

func (s *server) flushNow() func() { return s.flush }

// A method expression of a blocking function, called in a task.
func (s *server) methodExprBlocking(t *asyncio.T) {
	(*sync.Mutex).Lock(&s.mu) // want `blockingcall: sync\.Mutex\.Lock inside a task blocks`
	s.n++
	(*sync.Mutex).Unlock(&s.mu)
	(*server).flush(s) // want `blockingcall: h48_funcvalues\.server\.flush inside a task blocks`
}

// Mutex held briefly, shared with a goroutine: reported (the contract).
func (s *server) shared(t *asyncio.T) error {
	go func() {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
	}()
	s.mu.Lock() // want `blockingcall: sync\.Mutex\.Lock inside a task blocks`
	s.n++
	s.mu.Unlock()
	return nil
}

// Local mutex, never leaves: not reported.
func localMutex(t *asyncio.T) int {
	var mu sync.Mutex
	n := 0
	mu.Lock()
	n++
	mu.Unlock()
	return n
}

// A local mutex captured by a deferred closure, still never leaving.
func localMutexDefer(t *asyncio.T) int {
	var mu sync.Mutex
	n := 0
	mu.Lock()
	defer mu.Unlock()
	n++
	return n
}

// Embedded mutex.
type counter struct {
	sync.Mutex
	n int
}

func (c *counter) bump(t *asyncio.T) {
	c.Lock() // want `blockingcall: sync\.Mutex\.Lock inside a task blocks`
	c.n++
	c.Unlock()
}
