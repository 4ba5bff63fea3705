//go:build unix

package aio

import (
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/gid"
	"golang.org/x/sys/unix"
)

// Conn is a net.Conn over a non-blocking socket registered with a loop,
// so that crypto/tls, bufio and net/http.ReadResponse run unchanged on
// the loop: Read, Write and Close suspend only the calling task, and
// deadlines are loop timers.
//
// A Conn must know which task is calling. Tasks are recognised by their
// goroutine: the task passed to NewConn or DialConn is known, and other
// tasks of the same loop declare themselves with Use before their first
// call. A call from any other goroutine (not a task of the loop) is run
// by a short-lived task on the loop, through CallSoonThreadsafe, while the
// caller blocks on a channel; the loop must be running. Calls from plain
// loop callbacks are not supported (they would block the loop).
type Conn struct {
	loop         *asyncio.Loop
	fd           int
	network      string
	laddr, raddr net.Addr
	rd, wr       connDir
	closed       bool
}

// connDir is one direction's deadline and pending wait.
type connDir struct {
	deadline time.Time
	waiter   *asyncio.Future[struct{}]
	timer    *asyncio.TimerHandle
	write    bool
}

// taskGoroutines maps goroutine ids to the task running on that goroutine
// (a task's goroutine never changes; ids are never reused).
var taskGoroutines sync.Map // uint64 -> *T

// registerTask records the calling goroutine as t's; t must be running.
func registerTask(t *asyncio.T) {
	if asyncio.CurrentTask(t.Loop()) != t {
		panic(runtimeErrorf("task %q is not the running task (a Conn is used from a task's own goroutine)", t.Name()))
	}
	id := gid.Current()
	if _, loaded := taskGoroutines.LoadOrStore(id, t); !loaded {
		t.AddDoneCallback(func() { taskGoroutines.Delete(id) })
	}
}

// NewConn wraps the connected non-blocking socket fd (network "tcp" or
// "unix"); t is the running task, which may use the Conn at once. The
// Conn owns fd from now on.
func NewConn(t *asyncio.T, fd int, network string) *Conn {
	registerTask(t)
	return &Conn{
		loop:    t.Loop(),
		fd:      fd,
		network: network,
		laddr:   localAddr(fd, network),
		raddr:   peerAddr(fd, network),
		wr:      connDir{write: true},
	}
}

// DialConn connects to address ("host:port" for network "tcp", a path for
// "unix") on t's loop, with the same resolution and happy eyeballs as
// CreateConnection (options WithHappyEyeballsDelay, WithInterleave,
// WithResolver), and returns a Conn (asyncio has no equivalent; it is
// net.Dial for the loop). Errors are *net.OpError, as net.Dial's.
func DialConn(t *asyncio.T, network, address string, opts ...Option) (*Conn, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	var fd int
	switch network {
	case "unix":
		sa, err := unixSockaddr(address)
		if err != nil {
			return nil, err
		}
		if fd, err = dialOne(t, unix.AF_UNIX, sa); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
	default:
		host, portStr, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		port, err := net.LookupPort("tcp", portStr)
		if err != nil {
			return nil, err
		}
		if fd, err = dialHost(t, host, port, o); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		network = "tcp"
	}
	return NewConn(t, fd, network), nil
}

// Use declares that task t (a task of c's loop) will call c's methods,
// and returns c. The task that created c need not call it.
func (c *Conn) Use(t *asyncio.T) *Conn {
	registerTask(t)
	return c
}

// callerTask returns the task whose goroutine is calling, if it is a
// known task of c's loop.
func (c *Conn) callerTask() *asyncio.T {
	if v, ok := taskGoroutines.Load(gid.Current()); ok {
		if t := v.(*asyncio.T); t.Loop() == c.loop {
			return t
		}
	}
	return nil
}

// run runs fn in the calling task, or, for a foreign goroutine, in a new
// task of c's loop while the caller waits.
func (c *Conn) run(fn func(t *asyncio.T)) error {
	if t := c.callerTask(); t != nil {
		fn(t)
		return nil
	}
	done := make(chan struct{})
	_, err := c.loop.CallSoonThreadsafe(func() {
		asyncio.CreateTask(c.loop, func(t *asyncio.T) (struct{}, error) {
			defer close(done) // also when the loop is closed under the task
			fn(t)
			return struct{}{}, nil
		})
	})
	if err != nil {
		return err
	}
	<-done
	return nil
}

func (c *Conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: c.network, Source: c.laddr, Addr: c.raddr, Err: err}
}

// wait suspends t until fd is ready in direction d, the deadline passes
// (os.ErrDeadlineExceeded) or the Conn is closed (net.ErrClosed).
func (c *Conn) wait(t *asyncio.T, d *connDir) error {
	l := c.loop
	f := asyncio.NewFuture[struct{}](l)
	add, remove := l.AddReader, l.RemoveReader
	if d.write {
		add, remove = l.AddWriter, l.RemoveWriter
	}
	if err := add(c.fd, func() {
		remove(c.fd)
		if !f.Done() {
			f.SetResult(struct{}{})
		}
	}); err != nil {
		return err
	}
	d.waiter = f
	c.armTimer(d)
	_, err := f.Await(t)
	d.waiter = nil
	if d.timer != nil {
		d.timer.Cancel()
		d.timer = nil
	}
	if err != nil && !c.closed {
		remove(c.fd)
	}
	return err
}

// armTimer (re)schedules the deadline timer of a pending wait.
func (c *Conn) armTimer(d *connDir) {
	if d.timer != nil {
		d.timer.Cancel()
		d.timer = nil
	}
	if d.waiter == nil || d.deadline.IsZero() {
		return
	}
	f := d.waiter
	write := d.write
	d.timer = c.loop.CallLater(time.Until(d.deadline), func() {
		if f.Done() {
			return
		}
		if write {
			c.loop.RemoveWriter(c.fd)
		} else {
			c.loop.RemoveReader(c.fd)
		}
		f.SetException(os.ErrDeadlineExceeded)
	})
}

func (d *connDir) expired() bool { return !d.deadline.IsZero() && !time.Now().Before(d.deadline) }

// Read reads into p, suspending the calling task until data, EOF (io.EOF)
// or the read deadline.
func (c *Conn) Read(p []byte) (n int, err error) {
	err = net.ErrClosed
	if rerr := c.run(func(t *asyncio.T) { n, err = c.read(t, p) }); rerr != nil {
		return 0, c.opError("read", rerr)
	}
	return n, c.opError("read", err)
}

func (c *Conn) read(t *asyncio.T, p []byte) (int, error) {
	for {
		if c.closed {
			return 0, net.ErrClosed
		}
		if c.rd.expired() {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := unix.Read(c.fd, p)
		switch {
		case err == nil:
			if n == 0 && len(p) > 0 {
				return 0, io.EOF
			}
			return n, nil
		case err == unix.EINTR:
		case isWouldBlock(err):
			if err := c.wait(t, &c.rd); err != nil {
				return 0, err
			}
		default:
			return 0, os.NewSyscallError("read", err)
		}
	}
}

// Write writes all of p, suspending the calling task while the socket's
// buffer is full, until the write deadline.
func (c *Conn) Write(p []byte) (n int, err error) {
	err = net.ErrClosed
	if rerr := c.run(func(t *asyncio.T) { n, err = c.write(t, p) }); rerr != nil {
		return 0, c.opError("write", rerr)
	}
	return n, c.opError("write", err)
}

func (c *Conn) write(t *asyncio.T, p []byte) (int, error) {
	total := 0
	for {
		if c.closed {
			return total, net.ErrClosed
		}
		if c.wr.expired() {
			return total, os.ErrDeadlineExceeded
		}
		if total == len(p) {
			return total, nil
		}
		n, err := sendNoSignal(c.fd, p[total:])
		switch {
		case err == nil:
			total += n
		case isWouldBlock(err):
			if err := c.wait(t, &c.wr); err != nil {
				return total, err
			}
		default:
			return total, os.NewSyscallError("write", err)
		}
	}
}

// Close closes the socket; pending Read and Write calls return
// net.ErrClosed. Closing twice returns net.ErrClosed.
func (c *Conn) Close() error {
	var err error
	if rerr := c.run(func(*asyncio.T) { err = c.close() }); rerr != nil {
		return rerr
	}
	return err
}

func (c *Conn) close() error {
	if c.closed {
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	c.loop.RemoveReader(c.fd)
	c.loop.RemoveWriter(c.fd)
	for _, d := range []*connDir{&c.rd, &c.wr} {
		if d.waiter != nil && !d.waiter.Done() {
			d.waiter.SetException(net.ErrClosed)
		}
	}
	return os.NewSyscallError("close", unix.Close(c.fd))
}

// CloseWrite shuts down the write side (net.TCPConn.CloseWrite).
func (c *Conn) CloseWrite() error {
	var err error
	if rerr := c.run(func(*asyncio.T) {
		if c.closed {
			err = net.ErrClosed
			return
		}
		err = os.NewSyscallError("shutdown", unix.Shutdown(c.fd, unix.SHUT_WR))
	}); rerr != nil {
		return rerr
	}
	return c.opError("close", err)
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline sets both deadlines; see SetReadDeadline.
func (c *Conn) SetDeadline(tm time.Time) error {
	return c.run(func(*asyncio.T) { c.setDeadline(&c.rd, tm); c.setDeadline(&c.wr, tm) })
}

// SetReadDeadline sets the read deadline (zero: none). A pending Read is
// woken with os.ErrDeadlineExceeded when it passes; the deadline is a
// loop timer.
func (c *Conn) SetReadDeadline(tm time.Time) error {
	return c.run(func(*asyncio.T) { c.setDeadline(&c.rd, tm) })
}

// SetWriteDeadline sets the write deadline; see SetReadDeadline.
func (c *Conn) SetWriteDeadline(tm time.Time) error {
	return c.run(func(*asyncio.T) { c.setDeadline(&c.wr, tm) })
}

func (c *Conn) setDeadline(d *connDir, tm time.Time) {
	d.deadline = tm
	c.armTimer(d)
}

// FD returns the socket's file descriptor.
func (c *Conn) FD() int { return c.fd }

var _ net.Conn = (*Conn)(nil)
