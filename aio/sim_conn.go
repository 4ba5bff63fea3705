//go:build unix

package aio

import (
	"net"
	"os"
	"syscall"
	"time"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// SimConn is one connection of a SimNetwork, seen from the network: a
// test injects faults through it (Reset, Stall, Resume).
type SimConn struct {
	n              *SimNetwork
	id             int
	client, server *SimHost
	caddr, saddr   *net.TCPAddr
	// cfd and sfd are the applications' ends (the client's, the
	// server's); c2 and s2 the network's.
	cfd, sfd int
	c2, s2   int
	up, down *simPipe // client -> server, server -> client
	accepted bool     // the server took sfd
	stalled  bool
	done     bool
}

// simPipe is one direction of a connection: it reads what the sender's
// application wrote from in and writes it, on time, to out.
type simPipe struct {
	c        *SimConn
	name     string
	from, to *SimHost
	in, out  int
	queue    []simSegment
	inflight int
	reading  bool // in is watched
	paused   bool // not watched because inflight reached the buffer
	inEOF    bool // in gave EOF (or a reset): nothing more to read
	writing  bool // out is watched (its receiver's buffer is full)
	timer    *asyncio.TimerHandle
	linkFree time.Duration // when the link has sent what it was given
	lastAt   time.Duration // the latest delivery time scheduled
	eofDone  bool          // the EOF was delivered
}

type simSegment struct {
	data []byte
	eof  bool // the sender half-closed (or closed)
	rst  bool // the sender's socket was reset
	at   time.Duration
}

// newConn makes the two socket pairs of a connection from client to sl.
func (n *SimNetwork) newConn(client *SimHost, sl *simListener) (*SimConn, error) {
	a, err := simSocketpair()
	if err != nil {
		return nil, err
	}
	b, err := simSocketpair()
	if err != nil {
		unix.Close(a[0])
		unix.Close(a[1])
		return nil, err
	}
	n.nextConn++
	c := &SimConn{
		n: n, id: n.nextConn, client: client, server: sl.host,
		caddr: &net.TCPAddr{IP: client.ip, Port: client.port()},
		saddr: sl.addr,
		cfd:   a[0], c2: a[1], sfd: b[0], s2: b[1],
	}
	c.up = &simPipe{c: c, name: "up", from: client, to: sl.host, in: c.c2, out: c.s2}
	c.down = &simPipe{c: c, name: "down", from: sl.host, to: client, in: c.s2, out: c.c2}
	registerSimFD(n, c.cfd, c.caddr, c.saddr)
	registerSimFD(n, c.sfd, c.saddr, c.caddr)
	n.conns[c] = struct{}{}
	c.up.watch()
	c.down.watch()
	return c, nil
}

// ID returns the connection's number (1, 2, ... in the order they were
// made), as the trace shows it.
func (c *SimConn) ID() int { return c.id }

// Client and Server return the connection's addresses.
func (c *SimConn) Client() net.Addr { return c.caddr }

// Server returns the address the connection was made to.
func (c *SimConn) Server() net.Addr { return c.saddr }

// Reset resets the connection, as a middlebox's RST: both applications
// see the connection reset (a read fails with ECONNRESET after the data
// already received; the transports' ConnectionLost gets it, so a stream
// reader's pending or next read fails with that error, asyncio's
// ConnectionResetError, matching syscall.ECONNRESET, and so do Drain and
// WaitClosed). What was in flight is lost. It does nothing on a
// connection already over.
func (c *SimConn) Reset() {
	if c.done {
		return
	}
	c.n.tracef("conn %d reset", c.id)
	resetPeer(c.cfd)
	if c.accepted {
		resetPeer(c.sfd)
	} else {
		c.removeFromBacklog()
	}
	c.finish(false)
}

// abort resets the side named ("client" or "server") because of why.
func (c *SimConn) abort(side, why string) {
	if c.done {
		return
	}
	c.n.tracef("conn %d reset toward the %s (%s)", c.id, side, why)
	if side == "client" {
		resetPeer(c.cfd)
	} else if c.accepted {
		resetPeer(c.sfd)
	}
	c.finish(false)
}

// resetPeer makes the application's socket app see ECONNRESET once the
// network closes its end: a socket pair closed with unread data resets
// its peer, so one byte is sent to the network's end first.
func resetPeer(app int) { unix.Write(app, []byte{0}) }

// Stall holds everything the connection carries, both ways, until
// Resume: the peers see a silent connection (no error, no data).
func (c *SimConn) Stall() {
	if c.done || c.stalled {
		return
	}
	c.stalled = true
	c.n.tracef("conn %d stalled", c.id)
}

// StallFor stalls the connection for d of loop time.
func (c *SimConn) StallFor(d time.Duration) {
	c.Stall()
	c.n.loop.CallLater(d, c.Resume)
}

// Resume ends a Stall: what was held is delivered after the link's
// latency.
func (c *SimConn) Resume() {
	if c.done || !c.stalled {
		return
	}
	c.stalled = false
	c.n.tracef("conn %d resumed", c.id)
	c.up.release()
	c.down.release()
}

// blocked reports whether p's segments must wait.
func (p *simPipe) blocked() bool { return p.c.stalled || p.c.n.partitioned(p.from, p.to) }

func (p *simPipe) watch() {
	if p.reading || p.inEOF || p.c.done {
		return
	}
	if err := p.c.n.loop.AddReader(p.in, p.readReady); err != nil {
		p.c.n.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "simulated network: cannot watch a relay socket", Err: err})
		return
	}
	p.reading = true
}

func (p *simPipe) unwatch() {
	if p.reading {
		p.c.n.loop.RemoveReader(p.in)
		p.reading = false
	}
}

// readReady takes what the sender wrote, up to the room left in the
// direction's buffer, and schedules its delivery.
func (p *simPipe) readReady() {
	n := p.c.n
	cfg := n.link(p.from, p.to)
	room := cfg.Buffer - p.inflight
	if room <= 0 {
		p.unwatch()
		p.paused = true
		return
	}
	buf := make([]byte, min(room, 64*1024))
	k, err := unix.Read(p.in, buf)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil: // the sender reset its socket (closed it with unread data)
		p.unwatch()
		p.inEOF = true
		n.tracef("conn %d %s: sender reset", p.c.id, p.name)
		p.enqueue(simSegment{rst: true}, 0, cfg)
	case k == 0:
		p.unwatch()
		p.inEOF = true
		n.tracef("conn %d %s: EOF sent", p.c.id, p.name)
		p.enqueue(simSegment{eof: true}, 0, cfg)
	default:
		p.inflight += k
		p.enqueue(simSegment{data: buf[:k:k]}, k, cfg)
		if p.inflight >= cfg.Buffer {
			p.unwatch()
			p.paused = true
		}
	}
}

// enqueue times seg: size bytes take size/Bandwidth on the link after
// what it is already sending, then latency and jitter; deliveries of one
// direction keep their order.
func (p *simPipe) enqueue(seg simSegment, size int, cfg LinkConfig) {
	n := p.c.n
	now := n.loop.Time()
	start := max(now, p.linkFree)
	if cfg.Bandwidth > 0 && size > 0 {
		start += time.Duration(int64(size) * int64(time.Second) / int64(cfg.Bandwidth))
	}
	p.linkFree = start
	seg.at = max(start+n.delay(p.from, p.to), p.lastAt)
	p.lastAt = seg.at
	if size > 0 {
		n.tracef("conn %d %s: %d bytes sent, due at %v", p.c.id, p.name, size, seg.at)
	}
	p.queue = append(p.queue, seg)
	p.schedule()
}

// schedule arms the timer for the first segment.
func (p *simPipe) schedule() {
	if p.timer != nil || len(p.queue) == 0 || p.writing || p.c.done {
		return
	}
	p.timer = p.c.n.loop.CallAt(p.queue[0].at, p.pump)
}

// release re-times held segments after a heal or a resume: none arrives
// before now plus the link's latency.
func (p *simPipe) release() {
	if p.blocked() || p.c.done {
		return
	}
	n := p.c.n
	earliest := n.loop.Time() + n.link(p.from, p.to).Latency
	for i := range p.queue {
		p.queue[i].at = max(p.queue[i].at, earliest)
	}
	if len(p.queue) > 0 {
		p.lastAt = max(p.lastAt, p.queue[len(p.queue)-1].at)
	}
	if p.timer != nil {
		p.timer.Cancel()
		p.timer = nil
	}
	p.schedule()
}

// pump delivers the segments that are due.
func (p *simPipe) pump() {
	p.timer = nil
	n := p.c.n
	for len(p.queue) > 0 && !p.c.done {
		if p.blocked() {
			n.tracef("conn %d %s: held", p.c.id, p.name)
			return // release schedules again
		}
		seg := &p.queue[0]
		if seg.at > n.loop.Time() {
			p.schedule()
			return
		}
		switch {
		case seg.rst:
			p.queue = nil
			side := "server"
			if p == p.c.down {
				side = "client"
			}
			p.c.abort(side, "the peer reset")
			return
		case seg.eof:
			unix.Shutdown(p.out, unix.SHUT_WR)
			p.queue = p.queue[1:]
			p.eofDone = true
			n.tracef("conn %d %s: EOF delivered", p.c.id, p.name)
			p.c.maybeFinish()
			return
		}
		k, err := unix.Write(p.out, seg.data)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			p.waitWritable()
			return
		case err != nil: // the receiver closed its socket: TCP answers with a RST
			n.tracef("conn %d %s: receiver gone", p.c.id, p.name)
			side := "client"
			if p == p.c.down {
				side = "server"
			}
			p.c.abort(side, "data to a closed socket")
			return
		}
		n.tracef("conn %d %s: %d bytes delivered", p.c.id, p.name, k)
		p.inflight -= k
		if k < len(seg.data) {
			seg.data = seg.data[k:]
		} else {
			p.queue = p.queue[1:]
		}
		if p.paused && p.inflight < n.link(p.from, p.to).Buffer {
			p.paused = false
			p.watch()
		}
	}
}

// waitWritable waits for the receiver to read (its socket buffer is
// full).
func (p *simPipe) waitWritable() {
	if p.writing {
		return
	}
	if err := p.c.n.loop.AddWriter(p.out, p.writable); err != nil {
		return
	}
	p.writing = true
}

func (p *simPipe) writable() {
	p.c.n.loop.RemoveWriter(p.out)
	p.writing = false
	p.pump()
}

// maybeFinish closes the relay once both directions delivered their EOF.
func (c *SimConn) maybeFinish() {
	if c.up.eofDone && c.down.eofDone {
		c.n.tracef("conn %d closed", c.id)
		c.finish(false)
	}
}

// clientGone is a dial cancelled after its connection was made: the
// client's socket is closed, which the server sees as EOF.
func (c *SimConn) clientGone() {
	c.n.tracef("conn %d: the dial was cancelled; closing the client's end", c.id)
	unix.Close(c.cfd)
}

func (c *SimConn) removeFromBacklog() {
	for _, sl := range c.n.listeners {
		for i, b := range sl.backlog {
			if b == c {
				sl.backlog = append(sl.backlog[:i], sl.backlog[i+1:]...)
				unix.Close(c.sfd)
				return
			}
		}
	}
}

// finish stops relaying and closes the network's ends.
func (c *SimConn) finish(network bool) {
	if c.done {
		return
	}
	if network {
		c.n.tracef("conn %d closed by the network", c.id)
		if !c.accepted {
			c.removeFromBacklog()
		}
	}
	l := c.n.loop
	for _, p := range []*simPipe{c.up, c.down} {
		p.unwatch()
		if p.writing {
			l.RemoveWriter(p.out)
			p.writing = false
		}
		if p.timer != nil {
			p.timer.Cancel()
			p.timer = nil
		}
		p.queue = nil
	}
	c.closeFDs()
	delete(c.n.conns, c)
}

func (c *SimConn) closeFDs() {
	if c.done {
		return
	}
	c.done = true
	unix.Close(c.c2)
	unix.Close(c.s2)
}

// simSocketpair makes a connected, non-blocking, close-on-exec pair of
// AF_UNIX stream sockets, on every Unix (some have no SOCK_NONBLOCK): under
// a read lock of syscall.ForkLock, as sysSocket does where it must, so no
// child forked meanwhile inherits them.
func simSocketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return fds, os.NewSyscallError("socketpair", err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
			return fds, os.NewSyscallError("fcntl", err)
		}
	}
	return fds, nil
}
