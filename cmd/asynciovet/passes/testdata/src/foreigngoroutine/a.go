package foreigngoroutine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// Positive cases.

func callbacks(t *asyncio.T, done func()) error {
	l := t.Loop()
	ev := asyncio.NewEvent()
	go func() {
		time.Sleep(time.Millisecond)
		l.CallSoon(done) // want `asyncio.Loop.CallSoon is called on l from a goroutine started by the task: only the loop's own schedule may use it`
		ev.Set()         // want `asyncio.Event.Set is called on ev from a goroutine started by the task`
	}()
	return ev.Wait(t)
}

func awaitsOffLoop(t *asyncio.T, tk *asyncio.Task[int]) {
	go func() {
		_ = asyncio.Sleep(t, time.Second) // want `asyncio.Sleep is called on t from a goroutine`
		defer func() {
			tk.Cancel() // want `asyncio.Task.Cancel is called on tk from a goroutine`
		}()
	}()
	go tk.Await(t) // want `asyncio.Task.Await is called on tk from a goroutine`
}

func spawners(t *asyncio.T, q *asyncio.Queue[int], fut *asyncio.Future[int]) {
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = q.PutNowait(1) // want `asyncio.Queue.PutNowait is called on q from a function that sync.WaitGroup.Go runs on another goroutine`
	})
	time.AfterFunc(time.Second, func() {
		_ = fut.SetResult(1) // want `asyncio.Future.SetResult is called on fut from a function that time.AfterFunc runs`
	})
	go func() {
		go func() {
			asyncio.CreateTask(t, func(t *asyncio.T) (int, error) { return 0, nil }) // want `asyncio.CreateTask is called on t from a goroutine`
		}()
	}()
}

type svc struct{ loop *asyncio.Loop }

func (s *svc) handle(t *asyncio.T) {
	go func() {
		s.loop.Stop() // want `asyncio.Loop.Stop is called on s from a goroutine`
	}()
}

// Negative cases.

func threadsafe(t *asyncio.T, h *asyncio.Handle) (int, error) {
	l := t.Loop()
	ev := asyncio.NewEvent()
	go func() {
		l.CallSoonThreadsafe(func() { ev.Set() }) // the callback runs on the loop
		h.Cancel()                                // handles may be cancelled from any goroutine
		_ = t.Loop()                              // an immutable accessor
		cf := asyncio.RunCoroutineThreadsafe(l, func(t2 *asyncio.T) (int, error) {
			return 1, asyncio.Sleep(t2, 0)
		})
		_ = cf.Wait(context.Background())
		v, err := cf.Result()
		fmt.Println(v, err)
	}()
	return 0, ev.Wait(t)
}

func ownLoop(t *asyncio.T) {
	go func() {
		loop := asyncio.NewLoop() // the goroutine's own loop
		tk := asyncio.CreateTask(loop, func(t *asyncio.T) (int, error) { return 1, nil })
		_ = loop.RunUntilComplete(tk)
		_ = loop.Close()
	}()
}

func offLoopWork(t *asyncio.T) (int, error) {
	return asyncio.Go(t, func(ctx context.Context) (int, error) {
		ch := make(chan int, 1)
		go func() { ch <- 42 }()
		return <-ch, nil
	})
}

// Not in a task: the main goroutine may own the loop.
func notATask(l *asyncio.Loop) {
	go func() { l.Stop() }()
}

func storedNotStarted(t *asyncio.T, ev *asyncio.Event) func() {
	return func() { ev.Set() } // not a goroutine
}

// A loop Conn may be used from any goroutine (documented): silent.
func connFromGoroutine(t *asyncio.T) error {
	c, err := aio.DialConn(t, "tcp", "127.0.0.1:80")
	if err != nil {
		return err
	}
	go func() {
		c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
		c.Close()
	}()
	return nil
}
