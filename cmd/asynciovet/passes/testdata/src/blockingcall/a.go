package blockingcall

import (
	"context"
	"database/sql"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// Positive cases: blocking calls on the loop.

func channels(t *asyncio.T, ch chan int, out chan<- int) (int, error) {
	v := <-ch           // want `channel receive inside a task blocks the whole event loop until a value arrives; use asyncio.Recv\(t, ch\)`
	out <- v            // want `channel send inside a task blocks the whole event loop until a receiver is ready; use asyncio.Send\(t, ch, v\)`
	for x := range ch { // want `range over a channel inside a task blocks`
		v += x
	}
	select { // want `select without a default case inside a task blocks`
	case x := <-ch:
		v += x
	case out <- 1:
	}
	<-time.After(time.Second) // want `channel receive inside a task`
	return v, nil
}

type server struct {
	mu    sync.Mutex
	rw    sync.RWMutex
	wg    sync.WaitGroup
	cond  *sync.Cond
	db    *sql.DB
	state int
}

// A method with a *T parameter is a task function too.
func (s *server) handle(t *asyncio.T) error {
	s.mu.Lock() // want `sync.Mutex.Lock inside a task blocks the whole event loop until it returns; use an asyncio.Lock between tasks`
	s.state++
	s.mu.Unlock()
	s.rw.RLock() // want `sync.RWMutex.RLock inside a task`
	s.rw.RUnlock()
	s.wg.Wait()                         // want `sync.WaitGroup.Wait inside a task`
	s.cond.Wait()                       // want `sync.Cond.Wait inside a task`
	rows, err := s.db.Query("SELECT 1") // want `sql.DB.Query inside a task .*Context variant`
	if err != nil {
		return err
	}
	defer rows.Close()
	_, err = s.db.ExecContext(t.Context(), "DELETE") // want `sql.DB.ExecContext inside a task`
	return err
}

func network(t *asyncio.T, c *http.Client, req *http.Request) (string, error) {
	conn, err := net.Dial("tcp", "example.com:80") // want `net.Dial inside a task blocks .*aio.DialConn`
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn) // want `io.ReadAll on a connection from package net inside a task`
	if err != nil {
		return "", err
	}
	resp, err := http.Get("http://example.com/") // want `http.Get inside a task blocks .*asyncio.Go`
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if _, err := c.Do(req); err != nil { // want `http.Client.Do inside a task`
		return "", err
	}
	return string(b), nil
}

func processes(t *asyncio.T) ([]byte, error) {
	if err := exec.Command("true").Run(); err != nil { // want `exec.Cmd.Run inside a task .*exec.CommandContext`
		return nil, err
	}
	f, err := os.Open("/etc/hosts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f) // want `io.ReadAll on an \*os.File inside a task`
}

func inlineBodiesAndCallbacks(t *asyncio.T, ch chan int) error {
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		<-ch // want `channel receive inside a task's TaskGroup/Timeout body`
		return nil
	})
	if err != nil {
		return err
	}
	t.Loop().CallSoon(func() {
		time.Sleep(time.Millisecond) // want `time.Sleep inside a loop callback`
	})
	func() {
		defer func() {
			ch <- 1 // want `channel send inside a task`
		}()
	}()
	return nil
}

func taskLiteral(l *asyncio.Loop, ch chan int) *asyncio.Task[int] {
	return asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		return <-ch, nil // want `channel receive inside a task`
	})
}

// Negative cases: code that runs off the loop, or does not block.

func offLoop(t *asyncio.T, ch chan int) (int, error) {
	go func() {
		time.Sleep(time.Second) // a goroutine of its own
		ch <- 1
	}()
	v, err := asyncio.Go(t, func(ctx context.Context) (int, error) {
		time.Sleep(time.Second) // runs off the loop
		return <-ch, nil
	})
	if err != nil {
		return 0, err
	}
	_, err = asyncio.ToThread(t, func(ctx context.Context) ([]byte, error) {
		return exec.CommandContext(ctx, "true").Output()
	})
	if err != nil {
		return 0, err
	}
	fut := asyncio.RunInExecutor(t, func(ctx context.Context) (int, error) {
		var mu sync.Mutex
		mu.Lock()
		defer mu.Unlock()
		return 1, nil
	})
	later := func() { <-ch } // stored, not called here: it may run anywhere
	_ = later
	return fut.Await(t)
}

func nonBlocking(t *asyncio.T, ch chan int, conn *aio.Conn, r io.Reader) ([]byte, error) {
	select {
	case v := <-ch:
		_ = v
	default:
	}
	var mu sync.Mutex
	mu.Unlock()
	if _, err := io.ReadAll(conn); err != nil { // a loop connection suspends only this task
		return nil, err
	}
	return io.ReadAll(r) // an unknown reader: maybe a loop reader, stay silent
}

// Not a task function: no *asyncio.T, not given to the library. It is a
// blocking helper, though: a task that calls it is reported (helpers.go).
func plain(ch chan int) int { // want plain:"blocks: calls time.Sleep"
	time.Sleep(time.Millisecond)
	return <-ch
}

// A *testing.T-like parameter of another package is not a task handle.
type T struct{}

func notATask(t *T, ch chan int) int { return <-ch }

// Methods of a net.Conn interface may be a loop Conn: silent.
func ifaceConn(t *asyncio.T, c net.Conn, b []byte) (int, error) { return c.Read(b) }

// Buffered channels: a send provably finds room only on a local channel
// made with a constant buffer, sent on at most that many times, outside
// loops, and not handed to anyone else.

func bufferedResult(l *asyncio.Loop) error {
	done := make(chan error, 1)
	asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		err := asyncio.Sleep(t, time.Second)
		done <- err // room for the one value: silent
		return 0, err
	})
	return <-done
}

func bufferTooSmall(l *asyncio.Loop) {
	ch := make(chan int, 1)
	asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		ch <- 1 // want `channel send inside a task`
		ch <- 2 // want `channel send inside a task`
		return 0, nil
	})
}

func bufferInLoop(l *asyncio.Loop) {
	ch := make(chan int, 1)
	for i := range 3 {
		asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
			ch <- i // want `channel send inside a task`
			return 0, nil
		})
	}
}

func bufferEscapes(l *asyncio.Loop, fill func(chan int)) {
	ch := make(chan int, 1)
	fill(ch) // someone else may fill it
	asyncio.CreateTask(l, func(t *asyncio.T) (int, error) {
		ch <- 1 // want `channel send inside a task`
		return 0, nil
	})
}
