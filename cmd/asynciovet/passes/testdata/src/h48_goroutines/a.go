// Package h48_goroutines: goroutines started through helpers, errgroup,
// WaitGroup.Go, and the functions the library runs off the loop.
package h48_goroutines

import (
	"context"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
	"golang.org/x/sync/errgroup"
)

// errgroup's goroutines using the task's objects.
func withErrgroup(t *asyncio.T, q *asyncio.Queue[int], urls []string) error {
	var g errgroup.Group
	for _, u := range urls {
		g.Go(func() error {
			resp, err := http.Get(u)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return q.PutNowait(1) // want `foreigngoroutine: asyncio\.Queue\.PutNowait is called on q`
		})
	}
	return g.Wait() // want `blockingcall: errgroup\.Group\.Wait inside a task blocks`
}

// errgroup waited on inside asyncio.Go: fine.
func errgroupOffLoop(t *asyncio.T, urls []string) error {
	_, err := asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
		g, ctx := errgroup.WithContext(ctx)
		for _, u := range urls {
			g.Go(func() error {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
				if err != nil {
					return err
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				return resp.Body.Close()
			})
		}
		return struct{}{}, g.Wait()
	})
	return err
}

// WaitGroup.Go with a method value and a literal.
func withWaitGroup(t *asyncio.T, ev *asyncio.Event) error {
	var wg sync.WaitGroup
	wg.Go(ev.Set)                // want `foreigngoroutine: asyncio\.Event\.Set is called on ev`
	wg.Go(func() { ev.Clear() }) // want `foreigngoroutine: asyncio\.Event\.Clear is called on ev`
	_, err := asyncio.Go(t, func(ctx context.Context) (struct{}, error) {
		wg.Wait()
		return struct{}{}, nil
	})
	return err
}

// Blocking calls in asyncio.Go and ToThread callbacks are fine.
func offLoop(t *asyncio.T, path string) ([]byte, error) {
	b, err := asyncio.Go(t, func(ctx context.Context) ([]byte, error) {
		time.Sleep(time.Millisecond)
		return os.ReadFile(path)
	})
	if err != nil {
		return nil, err
	}
	_, err = asyncio.ToThread(t, func(ctx context.Context) (int, error) {
		var mu sync.Mutex
		mu.Lock()
		defer mu.Unlock()
		return 0, nil
	})
	return b, err
}

// The task's handle or objects used inside asyncio.Go's function.
func misuseInGo(t *asyncio.T, ev *asyncio.Event) error {
	_, err := asyncio.Go(t, func(ctx context.Context) (int, error) {
		ev.Set()                                     // want `foreigngoroutine: asyncio\.Event\.Set is called on ev`
		return 0, asyncio.Sleep(t, time.Millisecond) // want `foreigngoroutine: asyncio\.Sleep is called on t`
	})
	return err
}

// A goroutine started through a helper of the program: the literal is an
// argument of an ordinary call, so the check cannot know it runs on
// another goroutine (a documented limitation).
func spawn(f func()) { go f() }

func throughHelper(t *asyncio.T, ev *asyncio.Event) {
	spawn(func() { ev.Set() })
}

// A goroutine that uses the thread-safe entry points.
func threadsafe(t *asyncio.T, ev *asyncio.Event, sigs chan os.Signal) {
	l := t.Loop()
	go func() {
		<-sigs
		l.CallSoonThreadsafe(ev.Set)
	}()
}

// A goroutine that captures the handle and awaits with it.
func captured(t *asyncio.T) {
	go func() {
		asyncio.Sleep(t, time.Millisecond) // want `droppedcancel: the error of asyncio\.Sleep is` `foreigngoroutine: asyncio\.Sleep is called on t`
	}()
}

// time.AfterFunc with a loop object's method value.
func afterFunc(t *asyncio.T, ev *asyncio.Event) {
	time.AfterFunc(time.Second, ev.Set) // want `foreigngoroutine: asyncio\.Event\.Set is called on ev`
}

// A goroutine calling a coroutine of the program with the task's handle.
func work(t *asyncio.T) error { return asyncio.Sleep(t, time.Millisecond) }

func goCoroutine(t *asyncio.T) {
	go work(t) // want `foreigngoroutine: h48_goroutines\.work is given the task's`
}

// errgroup's Go given a method value.
type svc struct{ ev *asyncio.Event }

func (s *svc) wait(t *asyncio.T) error { return s.ev.Wait(t) }

func errgroupMethodValue(t *asyncio.T, tk *asyncio.Task[int]) error {
	var g errgroup.Group
	g.Go(func() error {
		_, err := tk.Result() // want `foreigngoroutine: asyncio\.Task\.Result is called on tk`
		return err
	})
	return g.Wait() // want `blockingcall: errgroup\.Group\.Wait inside a task blocks`
}

// A goroutine started by a method uses the receiver's loop objects.
type pool struct {
	q    *asyncio.Queue[int]
	ev   *asyncio.Event
	quit chan struct{}
}

func (p *pool) start(t *asyncio.T) {
	go func() {
		<-p.quit
		p.ev.Set() // want `foreigngoroutine: asyncio\.Event\.Set is called on p`
	}()
}

// A goroutine that the callback of a task starts: the task's objects are
// still the loop's.
func fromCallback(t *asyncio.T, ev *asyncio.Event) {
	t.Loop().CallSoon(func() {
		go func() { ev.Set() }() // want `foreigngoroutine: asyncio\.Event\.Set is called on ev`
	})
}

// A goroutine given the task's event as an argument.
func asArgument(t *asyncio.T, ev *asyncio.Event) {
	go func(e *asyncio.Event) { e.Set() }(ev) // want `foreigngoroutine: asyncio\.Event\.Set is called on e`
}

// A goroutine that runs a loop of its own, whose objects it makes.
func ownLoop(t *asyncio.T) {
	go func() {
		ev := asyncio.NewEvent()
		ev.Set()
		if _, err := asyncio.Run(func(c *asyncio.T) (int, error) { return 0, ev.Wait(c) }); err != nil {
			log.Print(err)
		}
	}()
}

// A watchdog goroutine that kills the task's subprocess: aio.Process, a
// Limiter and a BoundedGroup are the loop's only, as a Queue is.
func watchdogKill(t *asyncio.T, p *aio.Process, lim *asyncio.Limiter, stop chan struct{}) error {
	go func() {
		select {
		case <-stop:
		case <-time.After(time.Minute):
			if err := p.Kill(); err != nil { // want `foreigngoroutine: aio\.Process\.Kill is called on p`
				log.Print(err)
			}
			log.Print(lim.Tokens()) // want `foreigngoroutine: asyncio\.Limiter\.Tokens is called on lim`
		}
	}()
	_, err := p.Wait(t)
	return err
}

func boundedCancel(t *asyncio.T) error {
	return asyncio.BoundedTaskGroup(t, 2, func(g *asyncio.BoundedGroup) error {
		time.AfterFunc(time.Second, g.Cancel) // want `foreigngoroutine: asyncio\.BoundedGroup\.Cancel is called on g`
		return nil
	})
}

// context.AfterFunc runs its function on a goroutine of its own when the
// context is done: cancelling the task from there races with the loop.
func cancelOnContext(t *asyncio.T, ctx context.Context, tk *asyncio.Task[int]) (int, error) {
	stop := context.AfterFunc(ctx, func() { tk.Cancel() }) // want `foreigngoroutine: asyncio\.Task\.Cancel is called on tk`
	defer stop()
	return tk.Await(t)
}

// The thread-safe way.
func cancelOnContextSafe(t *asyncio.T, ctx context.Context, tk *asyncio.Task[int]) (int, error) {
	l := t.Loop()
	stop := context.AfterFunc(ctx, func() {
		if _, err := l.CallSoonThreadsafe(func() { tk.Cancel() }); err != nil {
			log.Print(err)
		}
	})
	defer stop()
	return tk.Await(t)
}
