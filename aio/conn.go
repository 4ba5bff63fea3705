//go:build unix

package aio

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/internal/hooks"
	"golang.org/x/sys/unix"
)

// Conn is a net.Conn over a non-blocking socket registered with a loop,
// so that crypto/tls, bufio and net/http run unchanged on the loop, and
// libraries that read on one goroutine and write on another keep working.
//
// Who may call, and what happens:
//   - A task of the loop (the usual case): Read, Write and Close suspend
//     only the calling task; deadlines are loop timers.
//   - Any other goroutine: the call is handed to the loop (through
//     CallSoonThreadsafe) and the goroutine waits for its outcome. The
//     loop must be running: a call made while it is not fails at once
//     with an error matching ErrLoopNotRunning; one already waiting when
//     the loop stops is served when it runs again, and fails with
//     net.ErrClosed if it closes instead.
//   - A plain loop callback cannot wait: Read and Write fail at once
//     there; Close, CloseWrite, the deadlines and the addresses work.
//   - A task or callback of another loop: Read and Write fail at once with
//     a *asyncio.RuntimeError, since waiting would stop that whole loop;
//     call them on this Conn's loop (asyncio.CallOn) or in asyncio.Go.
//
// net.Conn's concurrency contract holds: Read and Write may run at the
// same time on different goroutines or tasks; concurrent Reads (and
// concurrent Writes) are served one after the other in the order they
// were made, none is lost and a Write's bytes are never interleaved with
// another's; SetReadDeadline, SetWriteDeadline and Close wake every
// pending call of their direction. When the loop closes, the Conn is
// closed with it. Calls after Close return net.ErrClosed.
//
// A task cancelled in Read or Write gets the cancellation as the error,
// with the count of bytes the call moved: a Read that was served before
// the cancellation reached the task returns n > 0 with it. As io.Reader's
// contract says, use the n bytes before looking at err; then a cancelled
// Read loses nothing (a Read cancelled before data arrived consumes none).
// The error unwraps to the *asyncio.CancelledError and is, as a
// net.Error, Temporary (not a Timeout): crypto/tls over the Conn keeps
// the connection, and what it had read, for the next Read, as it does
// after a read deadline.
//
// Make it with NewConn or DialConn: the methods of the zero Conn (but
// LocalAddr, RemoteAddr and FD) panic with a *asyncio.ValueError.
type Conn struct {
	loop         *asyncio.Loop
	fd           int
	network      string
	laddr, raddr net.Addr

	// Loop side: touched only on the loop's goroutine.
	rd, wr    connDir
	virtual   bool // the loop runs on virtual time
	fdClosed  bool
	disown    func() bool
	loopClose bool // the loop closed under the Conn

	// Shared with other goroutines.
	mu       sync.Mutex
	shut     bool                 // Close was called, or the loop closed
	foreign  map[*connOp]struct{} // calls of other goroutines, not yet done
	deadline [2]time.Time         // read, write (net.Conn: any goroutine sets them)
	applying [2]bool              // a deadline change is on its way to the loop
}

// connDir is one direction's queue of calls.
type connDir struct {
	write    bool
	queue    []*connOp // FIFO: queue[0] is being served
	watching bool      // the fd is registered for this direction
	timer    *asyncio.TimerHandle
	timerFor time.Time // the deadline the timer is armed for
	fired    time.Time // a deadline the loop's timer saw pass
	// On a virtual-time loop the deadline counts on the loop's clock:
	// loopDeadline is the deadline loopFor (the one set) became when it
	// was set, the loop's time then plus what was left of it.
	loopFor      time.Time
	loopDeadline time.Duration
}

// connOp is one Read or Write (or, for another goroutine, any call run on
// the loop). A task waits on fut, another goroutine on done.
type connOp struct {
	p   []byte
	n   int
	err error
	run func() // a call from another goroutine that is not a Read or Write

	fut  *asyncio.Future[struct{}]
	done chan struct{}
	// For calls of other goroutines, under Conn.mu: claimed once the loop
	// works on the call (from then on only the loop may finish it: it may
	// be using p), finished once its caller may return.
	claimed, finished bool
}

// checkMade panics with a *asyncio.ValueError naming op when c was not
// made by NewConn or DialConn: the zero Conn has no loop, and its fd 0 is
// not its own (it would close the process's standard input).
func (c *Conn) checkMade(op string) {
	if c.loop == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero Conn (make it with NewConn or DialConn)"})
	}
}

// NewConn wraps the connected non-blocking socket fd (network "tcp" or
// "unix") on owner's loop. The Conn owns fd from now on, and closes it
// when the loop closes if it is still open. Call it on the loop's
// goroutine (a task or callback) or while the loop is not running: from
// another goroutine while it runs it panics, as the loop's own calls do
// (use the loop's CallSoonThreadsafe); the Conn it returns may then be
// used from any goroutine. A negative fd, or another network, panics with
// a *asyncio.ValueError naming it, before the Conn is made.
func NewConn(owner asyncio.LoopOwner, fd int, network string) *Conn {
	l := asyncio.LoopOf(owner)
	if fd < 0 {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("NewConn: fd %d is not a file descriptor (want >= 0)", fd)})
	}
	if network != "tcp" && network != "unix" {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("NewConn: network %q (want \"tcp\" or \"unix\")", network)})
	}
	c := &Conn{
		loop:    l,
		fd:      fd,
		network: network,
		laddr:   localAddr(fd, network),
		raddr:   peerAddr(fd, network),
		rd:      connDir{},
		wr:      connDir{write: true},
		virtual: hooks.IsVirtual(l),
	}
	c.disown = l.OnClose(c.releaseAtLoopClose)
	return c
}

// DialConn connects to address ("host:port" for network "tcp", a path for
// "unix") on t's loop, with the same resolution and happy eyeballs as
// CreateConnection (options WithHappyEyeballsDelay, WithInterleave,
// WithResolver), and returns a Conn (asyncio has no equivalent; it is
// net.Dial for the loop). Errors are *net.OpError, as net.Dial's. Another
// network, and WithNetwork with "unix" (a simulated host has no Unix
// sockets), are a *ValueError naming it, before anything is dialled.
func DialConn(t *asyncio.T, network, address string, opts ...Option) (*Conn, error) {
	o, err := buildOptions("DialConn", opts)
	if err != nil {
		return nil, err
	}
	// Taken for "tcp", another network would dial TCP whatever it names,
	// and "unix" would dial a real socket off the simulated network.
	switch {
	case network != "tcp" && network != "unix":
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf(`DialConn: network %q is not supported (want "tcp" or "unix")`, network)}
	case network == "unix" && o.simHost != nil:
		return nil, &asyncio.ValueError{Msg: `DialConn: WithNetwork is not supported with network "unix" (a simulated host has no Unix sockets)`}
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
	default: // "tcp"
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
	}
	return NewConn(t, fd, network), nil
}

// ---- who is calling

// caller is where a call comes from.
type caller uint8

const (
	fromTask     caller = iota // a task of the loop, on its own goroutine
	fromCallback               // the loop's goroutine, outside any task
	fromForeign                // another goroutine
)

// who classifies the calling goroutine and returns the task if it is one.
func (c *Conn) who() (caller, *asyncio.T) {
	if !c.loop.OnLoopGoroutine() {
		return fromForeign, nil
	}
	if t := asyncio.CurrentTask(c.loop); t != nil {
		return fromTask, t
	}
	return fromCallback, nil
}

func (c *Conn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	if asyncio.IsCancelled(err) {
		err = &cancelledCall{err}
	}
	return &net.OpError{Op: op, Net: c.network, Source: c.laddr, Addr: c.raddr, Err: err}
}

// cancelledCall is the cancellation of the calling task as a Read or
// Write returns it, inside the *net.OpError: it unwraps to the
// *asyncio.CancelledError (errors.As and asyncio.IsCancelled see it),
// and as a net.Error it is Temporary and not a Timeout, since the call
// may be made again: a cancelled Read consumed nothing it did not
// return. This is what lets a library over the Conn go on after a
// cancelled call, as it does after a read deadline: crypto/tls keeps a
// read error that is not Temporary and returns it from every later Read,
// so a Read cancelled by a Timeout would end the connection's read side
// (and report a cancellation to Reads that were never cancelled).
type cancelledCall struct{ err error }

func (e *cancelledCall) Error() string { return e.err.Error() }
func (e *cancelledCall) Unwrap() error { return e.err }

// Timeout reports false: a cancellation is not a deadline.
func (e *cancelledCall) Timeout() bool { return false }

// Temporary reports true: the call may be made again.
func (e *cancelledCall) Temporary() bool { return true }

// errFromCallback is what a call that must wait returns in a loop callback.
func errFromCallback(method string) error {
	return runtimeErrorf("Conn.%s called from a loop callback, which cannot wait: call it from a task or another goroutine", method)
}

// errFromOtherLoop is what a Read or Write returns in a task or callback
// of another loop: it would block that loop's goroutine, and so every
// task of that loop, until this Conn's loop served it.
func errFromOtherLoop(method string) error {
	return runtimeErrorf("Conn.%s from a task or callback of another event loop would block that loop until this Conn's loop serves it: call it on the Conn's loop (asyncio.CallOn) or from a goroutine (asyncio.Go)", method)
}

// errNotRunning is what a call from another goroutine returns while the
// loop is not running.
func errNotRunning(method string) error {
	return fmt.Errorf("%w: Conn.%s from a goroutine that is not the loop's needs the loop running (RunForever, RunUntilComplete)", ErrLoopNotRunning, method)
}

// ---- Read and Write

// Read reads into p: it waits until data is available, EOF (io.EOF), the
// read deadline, or Close. Concurrent Reads are served in turn. If the
// calling task is cancelled, err is the cancellation and n may still be
// > 0 (the data had arrived): the caller must use p[:n] before err. A
// Read of no bytes returns (0, nil) once earlier Reads are served, past
// the deadline too, as net's Conns do.
func (c *Conn) Read(p []byte) (int, error) {
	c.checkMade("Conn.Read")
	n, err := c.do(&c.rd, "Read", p)
	return n, c.opError("read", err)
}

// Write writes all of p, waiting while the socket's buffer is full, until
// the write deadline or Close; on an error it returns the count already
// written. Concurrent Writes are served in turn, never interleaved.
func (c *Conn) Write(p []byte) (int, error) {
	c.checkMade("Conn.Write")
	n, err := c.do(&c.wr, "Write", p)
	return n, c.opError("write", err)
}

// do runs a Read or Write for whoever calls.
func (c *Conn) do(d *connDir, method string, p []byte) (int, error) {
	switch who, t := c.who(); who {
	case fromTask:
		return c.doInTask(t, d, p)
	case fromCallback:
		return 0, errFromCallback(method)
	}
	if hooks.CallerRunsALoop() {
		return 0, errFromOtherLoop(method)
	}
	op := &connOp{p: p}
	if err := c.submit(method, op, func() { c.enqueue(d, op) }); err != nil {
		return 0, err
	}
	return op.n, op.err
}

// doInTask runs a Read or Write in task t: at once if nothing is queued
// and the socket is ready, otherwise queued, with t suspended until it is
// served.
func (c *Conn) doInTask(t *asyncio.T, d *connDir, p []byte) (int, error) {
	op := &connOp{p: p}
	if len(d.queue) == 0 {
		if err := c.check(d, op); err != nil {
			return 0, err
		}
		if c.try(d, op) {
			return op.n, op.err
		}
		// The socket is not ready: op heads the queue and waits.
		op.fut = asyncio.NewFuture[struct{}](c.loop)
		d.queue = append(d.queue, op)
		c.watch(d)
		c.armTimer(d)
	} else {
		op.fut = asyncio.NewFuture[struct{}](c.loop)
		d.queue = append(d.queue, op)
	}
	if _, err := op.fut.Await(t); err != nil {
		// Cancelled: withdraw the call if it still waits. It may have
		// moved bytes already (part of a Write, or a whole Read served
		// before the cancellation reached t); the count says how much.
		c.withdraw(d, op)
		return op.n, err
	}
	return op.n, op.err
}

// check returns the error op, a call of d, fails with now, if any. A Read
// of no bytes ignores the deadline, as net's (internal/poll returns
// before it looks at the deadline); a Write of no bytes does not.
func (c *Conn) check(d *connDir, op *connOp) error {
	// shut: Close was called, though the socket's closing may still be
	// queued to the loop (Close from another goroutine).
	if c.fdClosed || c.isShut() {
		return net.ErrClosed
	}
	if (d.write || len(op.p) > 0) && c.expired(d) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// try makes the system call(s) of op; it reports whether op is complete
// (op.n and op.err are its outcome) or must wait for the socket.
func (c *Conn) try(d *connDir, op *connOp) bool {
	if !d.write {
		for {
			n, err := readFD(c.fd, op.p)
			switch {
			case err == nil:
				op.n = n
				if n == 0 && len(op.p) > 0 {
					op.err = io.EOF
				}
				return true
			case err == unix.EINTR:
			case isWouldBlock(err):
				return false
			default:
				op.err = os.NewSyscallError("read", err)
				return true
			}
		}
	}
	for op.n < len(op.p) {
		n, err := sendFD(c.fd, op.p[op.n:])
		switch {
		case err == nil:
			op.n += n
		case err == unix.EINTR:
		case isWouldBlock(err):
			return false
		default:
			op.err = os.NewSyscallError("write", err)
			return true
		}
	}
	return true
}

// enqueue queues op in d and serves d if op is first.
func (c *Conn) enqueue(d *connDir, op *connOp) {
	d.queue = append(d.queue, op)
	if len(d.queue) == 1 {
		c.serve(d)
	}
}

// serve serves d's queue from its head until a call must wait for the
// socket (then the fd is watched and the deadline timer armed) or the
// queue is empty.
func (c *Conn) serve(d *connDir) {
	for len(d.queue) > 0 {
		op := d.queue[0]
		if err := c.check(d, op); err != nil {
			c.failQueue(d, err)
			break
		}
		if !c.try(d, op) {
			c.watch(d)
			c.armTimer(d)
			return
		}
		d.queue[0] = nil
		d.queue = d.queue[1:]
		c.complete(op)
	}
	d.queue = nil
	c.unwatch(d)
	c.disarmTimer(d)
}

// withdraw removes a cancelled call of a task from d's queue.
func (c *Conn) withdraw(d *connDir, op *connOp) {
	for i, x := range d.queue {
		if x == op {
			d.queue = append(d.queue[:i], d.queue[i+1:]...)
			if i == 0 {
				c.serve(d) // the next call goes on, or d goes idle
			}
			return
		}
	}
}

// failQueue completes every call of d with err.
func (c *Conn) failQueue(d *connDir, err error) {
	q := d.queue
	d.queue = nil
	for _, op := range q {
		if op.fut == nil {
			// A call of another goroutine may be finished already (Close
			// while the loop was not running): its fields are its caller's.
			c.failForeign(op, err)
			continue
		}
		op.err = err
		c.complete(op)
	}
	c.unwatch(d)
	c.disarmTimer(d)
}

// complete hands op's outcome to its caller.
func (c *Conn) complete(op *connOp) {
	if op.fut != nil {
		if !op.fut.Done() && !c.loopClose {
			op.fut.SetResult(struct{}{})
		}
		return
	}
	c.finishForeign(op, op.n, op.err)
}

func (c *Conn) watch(d *connDir) {
	if d.watching {
		return
	}
	add := c.loop.AddReader
	if d.write {
		add = c.loop.AddWriter
	}
	if err := add(c.fd, func() { c.serve(d) }); err != nil {
		c.failQueue(d, err)
		return
	}
	d.watching = true
}

func (c *Conn) unwatch(d *connDir) {
	if !d.watching {
		return
	}
	d.watching = false
	if d.write {
		c.loop.RemoveWriter(c.fd)
	} else {
		c.loop.RemoveReader(c.fd)
	}
}

// ---- deadlines

func dirIndex(d *connDir) int {
	if d.write {
		return 1
	}
	return 0
}

// wallNow is time.Now, which the deadlines (time.Time, as net.Conn's)
// are measured against; a test stands in a clock that jumps.
var wallNow = time.Now

func (c *Conn) deadlineOf(d *connDir) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline[dirIndex(d)]
}

// expired reports whether d's deadline has passed: by the clock, or by
// the loop's timer; on a virtual-time loop by the loop's clock alone.
func (c *Conn) expired(d *connDir) bool {
	dl := c.deadlineOf(d)
	if c.virtual {
		return !dl.IsZero() && c.loop.Time() >= c.onLoopClock(d, dl)
	}
	return !dl.IsZero() && (dl.Equal(d.fired) || !wallNow().Before(dl))
}

// onLoopClock returns deadline dl of d on a virtual-time loop's clock:
// converted once, when it is first seen after it was set (right away for a
// deadline set on the loop, at the next loop iteration for another
// goroutine's), so that real time passing afterwards (a slow machine)
// changes nothing: only the loop's clock reaching it makes it pass.
func (c *Conn) onLoopClock(d *connDir, dl time.Time) time.Duration {
	if !dl.Equal(d.loopFor) {
		d.loopFor = dl
		d.loopDeadline = c.loop.Time() + dl.Sub(wallNow())
	}
	return d.loopDeadline
}

// armTimer arms d's deadline timer while d has a call waiting.
func (c *Conn) armTimer(d *connDir) {
	dl := c.deadlineOf(d)
	if d.timer != nil && d.timerFor.Equal(dl) {
		return
	}
	c.disarmTimer(d)
	if dl.IsZero() || len(d.queue) == 0 {
		return
	}
	d.timerFor = dl
	wait := dl.Sub(wallNow())
	if c.virtual {
		wait = c.onLoopClock(d, dl) - c.loop.Time()
	}
	d.timer = c.loop.CallLater(wait, func() {
		d.timer = nil
		d.fired = dl
		if len(d.queue) > 0 {
			c.failQueue(d, os.ErrDeadlineExceeded)
		}
	})
}

func (c *Conn) disarmTimer(d *connDir) {
	if d.timer != nil {
		d.timer.Cancel()
		d.timer = nil
	}
}

// applyDeadline, on the loop, makes d's waiting calls see a new deadline:
// they fail at once if it has passed, else the timer is re-armed.
func (c *Conn) applyDeadline(d *connDir) {
	c.mu.Lock()
	c.applying[dirIndex(d)] = false
	dl := c.deadline[dirIndex(d)]
	c.mu.Unlock()
	if c.virtual {
		if dl.IsZero() {
			d.loopFor = time.Time{} // set again later, it counts from then
		} else {
			c.onLoopClock(d, dl) // from now on the loop's clock says when
		}
	}
	if len(d.queue) == 0 || c.fdClosed {
		return
	}
	if c.expired(d) {
		c.failQueue(d, os.ErrDeadlineExceeded)
		return
	}
	c.armTimer(d)
}

// SetDeadline sets both deadlines; see SetReadDeadline.
func (c *Conn) SetDeadline(tm time.Time) error {
	return c.setDeadlines(tm, &c.rd, &c.wr)
}

// SetReadDeadline sets the deadline of pending and future Reads (zero:
// none). Reads waiting when it passes, or at once if it has passed
// already, return os.ErrDeadlineExceeded; it is a loop timer. On a
// virtual-time loop it counts on the loop's clock from when it is set
// (the loop's time then plus what was left of it by the wall clock), so
// only the loop's clock makes it pass; for deadlines exact to the
// nanosecond use a loop inside a testing/synctest bubble, whose time.Now
// is the loop's clock. Any goroutine may call it.
func (c *Conn) SetReadDeadline(tm time.Time) error { return c.setDeadlines(tm, &c.rd) }

// SetWriteDeadline sets the deadline of pending and future Writes; see
// SetReadDeadline.
func (c *Conn) SetWriteDeadline(tm time.Time) error { return c.setDeadlines(tm, &c.wr) }

func (c *Conn) setDeadlines(tm time.Time, dirs ...*connDir) error {
	c.checkMade("Conn.SetDeadline")
	var post []*connDir
	c.mu.Lock()
	if c.shut {
		c.mu.Unlock()
		return c.opError("set deadline", net.ErrClosed)
	}
	for _, d := range dirs {
		i := dirIndex(d)
		c.deadline[i] = tm
		if !c.applying[i] {
			c.applying[i] = true
			post = append(post, d)
		}
	}
	c.mu.Unlock()
	if who, _ := c.who(); who != fromForeign {
		for _, d := range dirs {
			c.applyDeadline(d)
		}
		return nil
	}
	// Another goroutine: calls submitted after this one see the new
	// deadline at once (they read it on the loop); the waiting ones are
	// woken as soon as the loop runs this.
	if len(post) > 0 {
		_, _ = c.loop.CallSoonThreadsafe(func() {
			for _, d := range post {
				c.applyDeadline(d)
			}
		})
	}
	return nil
}

// ---- calls from other goroutines

// submit runs queue on the loop for a call of another goroutine and waits
// until op is finished (by the loop, by Close, or by the loop closing).
func (c *Conn) submit(method string, op *connOp, queue func()) error {
	op.done = make(chan struct{})
	c.mu.Lock()
	if c.shut {
		c.mu.Unlock()
		return net.ErrClosed
	}
	if !c.loop.IsRunning() {
		c.mu.Unlock()
		return errNotRunning(method)
	}
	if c.foreign == nil {
		c.foreign = map[*connOp]struct{}{}
	}
	c.foreign[op] = struct{}{}
	c.mu.Unlock()
	if _, err := c.loop.CallSoonThreadsafe(func() {
		if c.claim(op) {
			queue()
		}
	}); err != nil {
		c.finishForeign(op, 0, net.ErrClosed) // the loop closed meanwhile
	}
	<-op.done
	return nil
}

// claim marks op as the loop's to finish, unless it is finished already
// (Close got there first).
func (c *Conn) claim(op *connOp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op.finished {
		return false
	}
	op.claimed = true
	return true
}

// finishForeign completes a call of another goroutine, once.
func (c *Conn) finishForeign(op *connOp, n int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finishForeignLocked(op, n, err)
}

// failForeign finishes a call of another goroutine with err and the count
// it moved, unless it is finished already.
func (c *Conn) failForeign(op *connOp, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finishForeignLocked(op, op.n, err)
}

// finishForeignLocked is finishForeign with c.mu held.
func (c *Conn) finishForeignLocked(op *connOp, n int, err error) {
	if op.finished {
		return
	}
	op.finished = true
	op.n, op.err = n, err
	delete(c.foreign, op)
	close(op.done)
}

// onLoop runs fn on the loop for the calling goroutine, whoever it is, and
// returns fn's error (net.ErrClosed, or ErrLoopNotRunning, if fn cannot
// run).
func (c *Conn) onLoop(method string, fn func() error) error {
	if who, _ := c.who(); who != fromForeign {
		return fn()
	}
	op := &connOp{}
	op.run = func() {
		err := fn()
		c.finishForeign(op, 0, err)
	}
	if err := c.submit(method, op, op.run); err != nil {
		return err
	}
	return op.err
}

// ---- closing

// Close closes the socket. Every pending Read and Write returns
// net.ErrClosed, at once for those of other goroutines. Closing twice
// returns net.ErrClosed. From another goroutine, Close returns once the
// loop has closed the socket if the loop is running; otherwise the
// socket is closed when the loop runs again or closes.
func (c *Conn) Close() error {
	c.checkMade("Conn.Close") // before shut is set
	c.mu.Lock()
	if c.shut {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.shut = true
	running := c.loop.IsRunning()
	c.mu.Unlock()
	if who, _ := c.who(); who != fromForeign {
		return c.opError("close", c.closeOnLoop())
	}
	// Calls of other goroutines that the loop has not taken up yet return
	// now; the others once the loop closes the socket, or now too if the
	// loop is not running: none is in a system call then, and the loop
	// makes none for a call once shut is set (check).
	c.finishForeignCalls(!running)
	// Close itself is a call of another goroutine: if the loop closes
	// before it runs what is queued here (that is discarded), the loop's
	// closing finishes it (releaseAtLoopClose).
	op := &connOp{done: make(chan struct{})}
	c.mu.Lock()
	if c.foreign == nil {
		c.foreign = map[*connOp]struct{}{}
	}
	c.foreign[op] = struct{}{}
	c.mu.Unlock()
	if _, err := c.loop.CallSoonThreadsafe(func() {
		if !c.claim(op) {
			return
		}
		c.mu.Lock()
		delete(c.foreign, op) // not failed by closeOnLoop's finishForeignCalls
		c.mu.Unlock()
		err := c.closeOnLoop()
		c.finishForeign(op, 0, err)
	}); err != nil {
		c.finishForeign(op, 0, nil)
		return nil // the loop is closed, and closed the socket
	}
	if !running {
		return nil
	}
	<-op.done
	if errors.Is(op.err, net.ErrClosed) {
		return nil // the loop closed first, and closed the socket
	}
	return c.opError("close", op.err)
}

// closeOnLoop closes the socket on the loop: every call of a task fails
// with net.ErrClosed.
func (c *Conn) closeOnLoop() error {
	if c.fdClosed {
		return nil
	}
	c.fdClosed = true
	c.disown()
	c.failQueue(&c.rd, net.ErrClosed)
	c.failQueue(&c.wr, net.ErrClosed)
	c.finishForeignCalls(true) // e.g. a CloseWrite on its way
	return os.NewSyscallError("close", unix.Close(c.fd))
}

// isShut reports whether Close was called (or the loop closed).
func (c *Conn) isShut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shut
}

// finishForeignCalls fails the calls of other goroutines with
// net.ErrClosed: all of them (on the loop, or with the loop closed), or
// only those the loop has not claimed.
//
// It holds c.mu throughout: a call found unclaimed is finished before the
// loop can claim it (and then touch op.n and op.p on its own goroutine).
func (c *Conn) finishForeignCalls(claimedToo bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for op := range c.foreign { // finishing deletes op: allowed in a range
		if claimedToo || !op.claimed {
			c.finishForeignLocked(op, op.n, net.ErrClosed)
		}
	}
}

// releaseAtLoopClose closes a Conn still open when its loop closes:
// waiting calls of other goroutines fail with net.ErrClosed (the loop's
// tasks are gone already).
func (c *Conn) releaseAtLoopClose() {
	c.mu.Lock()
	c.shut = true
	c.mu.Unlock()
	c.finishForeignCalls(true)
	c.loopClose = true
	c.rd.queue, c.wr.queue = nil, nil
	if !c.fdClosed {
		c.fdClosed = true
		unix.Close(c.fd)
	}
}

// CloseWrite shuts down the write side (net.TCPConn.CloseWrite).
func (c *Conn) CloseWrite() error {
	c.checkMade("Conn.CloseWrite")
	err := c.onLoop("CloseWrite", func() error {
		if c.fdClosed || c.isShut() {
			return net.ErrClosed
		}
		return os.NewSyscallError("shutdown", unix.Shutdown(c.fd, unix.SHUT_WR))
	})
	return c.opError("close", err)
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// FD returns the socket's file descriptor.
func (c *Conn) FD() int { return c.fd }

var _ net.Conn = (*Conn)(nil)
