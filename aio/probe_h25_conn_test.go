//go:build unix

package aio

import (
	"runtime"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// closeWaiting reports whether a goroutine is blocked on a channel inside
// Conn.Close (white box: it waits there for the loop to close the
// socket). It is a state, read from the goroutines' stacks, not a timing.
func closeWaiting() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[chan receive") && strings.Contains(g, "aio.(*Conn).Close(") {
			return true
		}
	}
	return false
}

// A Close from another goroutine made while the loop runs waits for the
// loop to close the socket. If the loop stops before it gets to that and
// is then closed, the loop's Close closes the socket and must release the
// waiting Close too (the queued call is discarded with the loop); it used
// to wait for ever.
func TestH25CloseFromGoroutineReturnsWhenTheLoopClosesFirst(t *testing.T) {
	l := asyncio.NewLoop()
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	closed := make(chan error, 1)
	var c *Conn
	task := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		c = NewConn(at, fds[0], "unix")
		go func() { closed <- c.Close() }()
		// The task holds the loop (no await) until that Close has queued
		// its call to the loop and waits for it; then the loop stops at
		// the end of this iteration, before running the call.
		for !closeWaiting() {
			runtime.Gosched()
		}
		at.Loop().Stop()
		return 0, nil
	})
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Result(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close: %v, want nil (the loop closed the socket)", err)
			}
			if _, err := unix.Write(fds[1], []byte("x")); err != unix.EPIPE {
				t.Errorf("peer write after Close: %v, want EPIPE (socket closed)", err)
			}
			return
		default:
		}
		// Once the loop is closed nothing can wake a Close still waiting.
		if closeWaiting() {
			t.Fatal("Conn.Close still waits after its loop was closed")
		}
		runtime.Gosched()
	}
}

// Close from another goroutine while the loop is not running returns at
// once and the socket is closed when the loop runs again; but the Conn is
// closed from then on: a task's Read or Write that runs before the loop
// got to closing the socket fails with net.ErrClosed, and so does a
// CloseWrite (they used to read, write and shut down the socket Close had
// been called on).
func TestH25TaskCallsAfterCloseWhileTheLoopWasStopped(t *testing.T) {
	l := asyncio.NewLoop()
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	c := NewConn(l, fds[0], "unix")
	if _, err := unix.Write(fds[1], []byte("hi")); err != nil {
		t.Fatal(err)
	}
	var log []string
	// Its first step is queued now, before what Close queues.
	task := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		log = append(log, "read: "+readString(c, 8))
		_, err := c.Write([]byte("x"))
		log = append(log, "write: "+describe(err))
		log = append(log, "close write: "+describe(c.CloseWrite()))
		return 0, nil
	})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	expectLog(t, []string{
		`read: "" op=read/unix closed`,
		"write: op=write/unix closed",
		"close write: op=close/unix closed",
	}, log)
}

// readWaiting reports whether a goroutine is blocked on a channel inside
// a Conn.Read (white box: in submit, waiting for the loop).
func readWaiting() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[chan receive") && strings.Contains(g, "aio.(*Conn).Read(") {
			return true
		}
	}
	return false
}

// Close wakes every pending call, "at once for those of other
// goroutines": also a Read of another goroutine that was already waiting
// in the loop's queue when the loop stopped, if Close is called while the
// loop is not running (it used to wait until the loop ran again or was
// closed).
func TestH25CloseWhileStoppedWakesAWaitingReadOfAnotherGoroutine(t *testing.T) {
	l := asyncio.NewLoop()
	fds := socketpair(t, unix.SOCK_STREAM)
	defer unix.Close(fds[1])
	c := NewConn(l, fds[0], "unix")
	read := make(chan string, 1)
	waiter := asyncio.CreateTask(l, func(at *asyncio.T) (int, error) {
		// Started once the loop runs (else it fails: loop not running).
		go func() { read <- readString(c, 8) }()
		return 0, waitQueued(at, &c.rd, 1)
	})
	if err := l.RunUntilComplete(waiter); err != nil {
		t.Fatal(err)
	}
	// The loop is stopped; the Read waits in its queue.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned: the Read is finished by now, its goroutine may just
	// not have run yet; it must not be waiting any more.
	for {
		select {
		case s := <-read:
			if want := `"" op=read/unix closed`; s != want {
				t.Errorf("read: %s, want %s", s, want)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		if readWaiting() {
			l.Close() // releases the Read, for goleak
			<-read
			t.Fatal("a Read of another goroutine still waits after Close returned")
		}
		runtime.Gosched()
	}
}
