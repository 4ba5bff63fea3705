// Package h48_callbacks: loop callbacks, protocols, predicates and bodies.
package h48_callbacks

import (
	"log"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// A protocol that embeds BaseProtocol and overrides two methods.
type echo struct {
	aio.BaseProtocol
	tr   aio.Transport
	mu   sync.Mutex
	seen int
	out  chan []byte
}

func (e *echo) ConnectionMade(tr aio.Transport) { e.tr = tr }

func (e *echo) DataReceived(b []byte) {
	e.mu.Lock() // want `blockingcall: sync\.Mutex\.Lock inside a protocol callback`
	e.seen += len(b)
	e.mu.Unlock()
	select {
	case e.out <- b:
	default:
		log.Print("dropped")
	}
	e.tr.Write(b)
}

// Not a protocol method: a helper of the type, called from a task.
func (e *echo) Stats() int { return e.seen }

// A done callback that blocks.
func onDone(t *asyncio.T, tk *asyncio.Task[int], results chan int) {
	tk.AddDoneCallback(func() {
		v, _ := tk.Result()
		results <- v // want `blockingcall: channel send inside a loop`
	})
}

// A CallLater callback that starts a goroutine using the task's event.
func later(t *asyncio.T, ev *asyncio.Event) {
	t.Loop().CallLater(time.Second, func() {
		go func() { ev.Set() }() // want `foreigngoroutine: asyncio\.Event\.Set is called on ev`
	})
}

// A Condition.WaitFor predicate that sleeps.
func predicate(t *asyncio.T, c *asyncio.Condition, ready *bool) error {
	return c.WaitFor(t, func() bool {
		time.Sleep(time.Millisecond) // want `blockingcall: time\.Sleep inside a Condition\.WaitFor predicate`
		return *ready
	})
}

// A Timeout body awaiting with the task's handle: same task.
func timeoutBody(t *asyncio.T, ev *asyncio.Event) error {
	return asyncio.Timeout(t, time.Second, func(s *asyncio.TimeoutScope) error {
		return ev.Wait(t)
	})
}

// A Timeout body whose await is dropped.
func timeoutDrop(t *asyncio.T, ev *asyncio.Event) error {
	return asyncio.Timeout(t, time.Second, func(s *asyncio.TimeoutScope) error {
		ev.Wait(t) // want `droppedcancel: the error of asyncio\.Event\.Wait is`
		return nil
	})
}

// A TaskGroup's own error dropped.
func groupDrop(t *asyncio.T) {
	asyncio.TaskGroup(t, func(g *asyncio.Group) error { return nil }) // want `droppedcancel: the error of asyncio\.TaskGroup is`
}

// The exception handler logs: fine.
func handler(t *asyncio.T) {
	t.Loop().SetExceptionHandler(func(l *asyncio.Loop, c asyncio.ExceptionContext) {
		log.Print(c.Message)
	})
}

// WithLock's body awaiting: same task.
func withLock(t *asyncio.T, lk *asyncio.Lock) error {
	return asyncio.WithLock(t, lk, func() error {
		return asyncio.Sleep(t, time.Millisecond)
	})
}

// A signal handler runs on the loop like any callback (asyncio's
// add_signal_handler).
func onSignal(t *asyncio.T, wg *sync.WaitGroup, ev *asyncio.Event) error {
	l := t.Loop()
	if err := l.AddSignalHandler(os.Interrupt, func() {
		wg.Wait() // want `blockingcall: sync\.WaitGroup\.Wait inside a loop callback`
		ev.Set()
	}); err != nil {
		return err
	}
	return l.AddSignalHandler(syscall.SIGTERM, ev.Set)
}
