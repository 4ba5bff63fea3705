//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"
	"slices"
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
	// cid and sid identify the sockets cfd and sfd (fdID): an
	// application may close its end while the connection lives on
	// (half-closed), and its descriptor number then names whatever the
	// process opens next.
	cid, sid [2]uint64
	up, down *simPipe // client -> server, server -> client
	accepted bool     // the server took sfd
	stalled  bool
	unstall  *asyncio.TimerHandle // StallFor's end
	done     bool
	// The handshake: dial until the SYN-ACK reaches the client, ack
	// until the client's ACK reaches the server, which queues the
	// connection in sl's backlog then. sfdGone: the network closed sfd
	// (never accepted).
	dial    *simDial
	ack     *asyncio.TimerHandle
	ackHeld bool // the ACK met a partition or a stall: it goes on at Heal or Resume
	// synAckHeld sends on the SYN-ACK a stall held, at Resume.
	synAckHeld func(after time.Duration)
	sl         *simListener
	handshake  bool
	sfdGone    bool
	// resetting: the connection ends with a reset, so the relay's ends
	// close with the kept bytes unread (sim_relay_linux.go).
	resetting bool
	// keepQueued: the connection was reset while in its listener's
	// backlog; it ended, but its server end stays queued for accept
	// (resetServerEnd), and the listener, or the network's release,
	// closes it if nobody accepts it.
	keepQueued bool
}

// simPipe is one direction of a connection: it reads what the sender's
// application wrote from in and writes it, on time, to out.
type simPipe struct {
	c        *SimConn
	name     string
	from, to *SimHost
	in, out  int
	app      int  // the sender's application socket
	kept     int  // relayed bytes left unread in in (sim_relay_linux.go)
	reread   bool // a readReady is scheduled (more may wait in in)
	// events are in's epoll events that called readReady, if evKnown
	// (sim_relay_linux.go).
	events   uint32
	evKnown  bool
	queue    []simSegment
	inflight int
	reading  bool // in is watched
	paused   bool // not watched because inflight reached the buffer
	// resetWatch: paused, and in is watched for a reset only (pause)
	resetWatch bool
	inEOF      bool // in gave EOF (or a reset): nothing more to read
	// rstSent: the sender's reset is queued (it resets once)
	rstSent bool
	// appShut: the sender's application shut its sending side down
	// (simShutWrite), which the relay may not have read yet
	appShut  bool
	writing  bool // out is watched (its receiver's buffer is full)
	timer    *asyncio.TimerHandle
	linkFree time.Duration // when the link has sent what it was given
	lastAt   time.Duration // the latest delivery time scheduled
	eofDone  bool          // the EOF was delivered
}

type simSegment struct {
	data []byte
	eof  bool   // the sender half-closed (or closed)
	rst  bool   // the sender's socket was reset
	why  string // the rst's reason in the trace ("the peer reset" if empty)
	at   time.Duration
}

// newConn makes the two socket pairs of a connection from client to sl.
// selfLocal and selfRemote, if not nil, are the loopback addresses of a
// host's connection to itself (selfAddrs), in place of the hosts' own.
func (n *SimNetwork) newConn(client *SimHost, sl *simListener, selfLocal, selfRemote net.IP) (*SimConn, error) {
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
	cport := client.port()
	if cport == 0 { // every port of the client is taken
		for _, fd := range []int{a[0], a[1], b[0], b[1]} {
			unix.Close(fd)
		}
		return nil, os.NewSyscallError("connect", unix.EADDRNOTAVAIL)
	}
	if client.clientPorts == nil {
		client.clientPorts = map[int]bool{}
	}
	client.clientPorts[cport] = true
	n.nextConn++
	c := &SimConn{
		n: n, id: n.nextConn, client: client, server: sl.host,
		caddr: &net.TCPAddr{IP: client.ip, Port: cport},
		saddr: sl.addr,
		cfd:   a[0], c2: a[1], sfd: b[0], s2: b[1],
	}
	c.cid[0], c.cid[1], _ = fdID(c.cfd)
	c.sid[0], c.sid[1], _ = fdID(c.sfd)
	if selfLocal != nil {
		c.caddr.IP = selfLocal
		c.saddr = &net.TCPAddr{IP: selfRemote, Port: sl.addr.Port}
	}
	c.up = &simPipe{c: c, name: "up", from: client, to: sl.host, in: c.c2, out: c.s2, app: c.cfd}
	c.down = &simPipe{c: c, name: "down", from: sl.host, to: client, in: c.s2, out: c.c2, app: c.sfd}
	registerSimFD(n, c.cfd, c.caddr, c.saddr, c.down)
	registerSimFD(n, c.sfd, c.saddr, c.caddr, c.up)
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
// WaitClosed), also one that half-closed (WriteEOF). What was in
// flight is lost. A connection still in its handshake (its SYN-ACK on
// the way) is refused instead: the client's dial fails with
// ECONNREFUSED, and the server never sees it. One waiting in the
// server's backlog is still accepted, as Linux's accept returns it: the
// server's protocol sees ConnectionMade, then ConnectionLost with
// ECONNRESET. It does nothing on a connection already over.
func (c *SimConn) Reset() {
	c.n.checkCaller("SimConn.Reset")
	if c.done {
		return
	}
	c.n.tracef("conn %d reset", c.id)
	c.resetting = true
	if d := c.dial; d != nil {
		// The SYN-ACK has not reached the client: the RST does, and
		// its connect is refused, as TCP refuses one in SYN-SENT.
		d.fail(fmt.Errorf("connect to %s: %w", d.addr, os.NewSyscallError("connect", unix.ECONNREFUSED)))
		return
	}
	resetPeer(c.cfd, c.cid)
	c.resetServerEnd()
	c.finish(false)
}

// resetServerEnd makes the server's end see the reset: the application's
// socket if the server accepted it; one waiting in the listener's
// backlog stays there, reset, since Linux's accept still returns such a
// connection (its first read fails with ECONNRESET), and asyncio makes a
// protocol for it that sees ConnectionMade, then ConnectionLost. One
// still in its handshake goes: a RST drops a half-open connection.
func (c *SimConn) resetServerEnd() {
	switch {
	case c.accepted:
		resetPeer(c.sfd, c.sid)
	case c.queued():
		resetPeer(c.sfd, c.sid)
		c.keepQueued = true // finish leaves sfd to the backlog
	default:
		c.dropServerEnd()
	}
}

// queued reports whether c waits in its listener's backlog.
func (c *SimConn) queued() bool {
	if c.sl == nil || c.sfdGone {
		return false
	}
	return slices.Contains(c.sl.backlog, c)
}

// abort resets the side named ("client" or "server") because of why.
func (c *SimConn) abort(side, why string) {
	if c.done {
		return
	}
	toApp := c.up
	if side == "client" {
		toApp = c.down
	}
	if toApp.eofDone {
		// The receiver has had the sender's EOF: a RST reaching a TCP
		// socket in CLOSE_WAIT fails its next send with EPIPE and
		// leaves its reads at EOF, which a clean close of the
		// network's ends does (a reset would fail its reads with
		// ECONNRESET: a socket pair reports the error before the EOF).
		c.n.tracef("conn %d reset toward the %s after its EOF (%s)", c.id, side, why)
		c.finish(false)
		return
	}
	c.n.tracef("conn %d reset toward the %s (%s)", c.id, side, why)
	c.resetting = true // the other side's application has closed its socket
	if side == "client" {
		resetPeer(c.cfd, c.cid)
	} else {
		c.resetServerEnd()
	}
	c.finish(false)
}

// resetPeer makes the application's socket app see ECONNRESET once the
// network closes its end: a socket pair closed with unread data resets
// its peer, so one byte is sent to the network's end first. (An
// application that shut down its sending side takes no byte; the byte
// the relay kept of what it sent does it then, sim_relay_linux.go.) The
// byte goes only while app is still the socket id: an application that
// closed it is not there to hear the reset, and the number may name
// another file by now, which must not get a byte nobody sent.
func resetPeer(app int, id [2]uint64) {
	if dev, ino, ok := fdID(app); ok && [2]uint64{dev, ino} == id {
		unix.Write(app, []byte{0})
	}
}

// Stall holds everything the connection carries, both ways, until
// Resume: the peers see a silent connection (no error, no data). A
// connection still in its handshake holds its SYN-ACK or the client's
// ACK too: the client connects, or the server accepts, only after the
// Resume (the link's latency after it).
func (c *SimConn) Stall() {
	c.n.checkCaller("SimConn.Stall")
	if c.done || c.stalled {
		return
	}
	c.stalled = true
	c.n.tracef("conn %d stalled", c.id)
}

// StallFor stalls the connection for d of loop time (a Resume ends it
// sooner; a later StallFor replaces its end). A negative d is a
// *ValueError, and stalls nothing.
func (c *SimConn) StallFor(d time.Duration) {
	c.n.checkCaller("SimConn.StallFor")
	if d < 0 {
		panic(&asyncio.ValueError{Msg: fmt.Sprintf("SimConn.StallFor: negative duration %v", d)})
	}
	c.Stall()
	if c.unstall != nil { // a new stall replaces the end of the last
		c.unstall.Cancel()
	}
	c.unstall = c.n.loop.CallLater(d, c.Resume)
}

// Resume ends a Stall: what was held is delivered after the link's
// latency.
func (c *SimConn) Resume() {
	c.n.checkCaller("SimConn.Resume")
	if c.unstall != nil {
		c.unstall.Cancel()
		c.unstall = nil
	}
	if c.done || !c.stalled {
		return
	}
	c.stalled = false
	c.n.tracef("conn %d resumed", c.id)
	latency := c.n.link(c.client, c.server).Latency
	if f := c.synAckHeld; f != nil {
		c.synAckHeld = nil
		f(latency)
	}
	if c.ackHeld && c.ack == nil {
		c.ack = c.n.loop.CallLater(latency, c.acked)
	}
	c.up.release()
	c.down.release()
}

// blocked reports whether p's segments must wait.
func (p *simPipe) blocked() bool { return p.c.stalled || p.c.n.partitioned(p.from, p.to) }

func (p *simPipe) watch() {
	if p.reading || p.inEOF || p.c.done {
		return
	}
	if err := p.c.n.watchRelay(p); err != nil {
		p.c.n.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "simulated network: cannot watch a relay socket", Err: err})
		return
	}
	p.reading = true
}

func (p *simPipe) unwatch() {
	if p.reading || p.resetWatch {
		p.c.n.unwatchRelay(p)
		p.reading = false
		p.resetWatch = false
	}
}

// pause stops reading the sender while the direction has its buffer's
// worth in flight. Where the relay can (Linux), it still watches for the
// sender's reset: a host resets at once when its application closes with
// unread data, whatever it still had to send, so the RST must not wait
// for the receiver to make room (senderReset).
func (p *simPipe) pause() {
	if p.reading && p.c.n.pauseRelay(p) {
		p.reading = false
		p.resetWatch = true
	} else {
		p.unwatch()
	}
	p.paused = true
}

// senderReset is the sender resetting its socket while the direction is
// paused, or after the sender's EOF (the relay saw its error): the RST
// goes at once, as a real host's does (one that closes with unread data
// resets also after its FIN), and what the sender wrote and the
// direction did not take is lost.
func (p *simPipe) senderReset() {
	p.unwatch()
	if p.rstSent || p.c.done {
		return
	}
	p.inEOF = true
	p.rstSent = true
	p.c.n.tracef("conn %d %s: sender reset", p.c.id, p.name)
	p.enqueue(simSegment{rst: true}, 0, p.c.n.link(p.from, p.to))
}

// simReadSize is the most the relay reads at once.
const simReadSize = 64 * 1024

// relayBuf returns the network's read buffer (simReadSize+1 bytes: what
// is read is copied out of it).
func (n *SimNetwork) relayBuf() []byte {
	if n.scratch == nil {
		n.scratch = make([]byte, simReadSize+1)
	}
	return n.scratch
}

// readReady takes what the sender wrote, up to the room left in the
// direction's buffer, and schedules its delivery.
func (p *simPipe) readReady() {
	if !p.reading || p.c.done {
		return // unwatched since the event, or the reread, was queued
	}
	n := p.c.n
	cfg := n.link(p.from, p.to)
	room := cfg.Buffer - p.inflight
	if room <= 0 {
		p.pause()
		return
	}
	// A segment is at most a quarter of the buffer, so that the next is
	// read while the others are still on the wire: with a buffer larger
	// than the link's bandwidth-delay product the link never idles, as a
	// TCP window that size keeps it busy.
	data, more, err := p.take(min(room, simReadSize, max(1, cfg.Buffer/4)))
	k := len(data)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil: // the sender reset its socket (closed it with unread data)
		p.unwatch()
		if p.appShut && !p.inEOF {
			// It shut down first (WriteEOF), then reset, before the
			// relay read its EOF: TCP's FIN left before the RST.
			n.tracef("conn %d %s: EOF sent", p.c.id, p.name)
			p.enqueue(simSegment{eof: true}, 0, cfg)
		}
		p.inEOF = true
		p.rstSent = true
		n.tracef("conn %d %s: sender reset", p.c.id, p.name)
		p.enqueue(simSegment{rst: true}, 0, cfg)
	case k == 0:
		// Nothing more to read, but the sender may still reset (close
		// with unread data after its WriteEOF): where the relay can,
		// it watches for that alone, as while paused.
		if p.reading && n.pauseRelay(p) {
			p.reading = false
			p.resetWatch = true
		} else {
			p.unwatch()
		}
		p.inEOF = true
		n.tracef("conn %d %s: EOF sent", p.c.id, p.name)
		p.enqueue(simSegment{eof: true}, 0, cfg)
	default:
		p.inflight += k
		p.enqueue(simSegment{data: data}, k, cfg)
		if p.inflight >= cfg.Buffer {
			p.pause()
		} else if more && !p.reread {
			// Read on in the next iteration, as a level-triggered
			// watch would.
			p.reread = true
			n.loop.CallSoon(func() {
				p.reread = false
				p.readReady()
			})
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
		start = simAddTime(start, time.Duration(int64(size)*int64(time.Second)/int64(cfg.Bandwidth)))
	}
	p.linkFree = start
	seg.at = max(simAddTime(start, n.delay(p.from, p.to)), p.lastAt)
	p.lastAt = seg.at
	if size > 0 {
		n.tracef("conn %d %s: %d bytes sent, due at %v", p.c.id, p.name, size, seg.at)
	}
	p.queue = append(p.queue, seg)
	p.schedule()
}

// schedule arms the timer for the first segment.
func (p *simPipe) schedule() {
	if p.timer != nil || len(p.queue) == 0 || p.c.done {
		return
	}
	at := p.queue[0].at
	if p.writing {
		// The receiver's socket is full: only a RST goes on (it needs
		// no room in the receiver's window).
		i := p.rstIndex()
		if i < 0 {
			return
		}
		at = p.queue[i].at
	}
	if n := p.c.n; n.relaying && at <= n.loop.Time() {
		p.pump() // due now, before the poll (prePoll)
		return
	}
	p.timer = p.c.n.loop.CallAt(at, p.pump)
}

// rstIndex returns the index of the first RST in p's queue, or -1.
func (p *simPipe) rstIndex() int {
	for i := range p.queue {
		if p.queue[i].rst {
			return i
		}
	}
	return -1
}

// release re-times held segments after a heal or a resume. The held
// ones (due while the direction was blocked) are sent again from now, as
// TCP retransmits them once the path is back: one after the other, each
// taking size/Bandwidth on the link, then the latency. So none arrives
// before now plus the latency, and a link does not deliver more than its
// bandwidth after a stall (its whole buffer at once). What the sender
// writes next waits for the link to have sent them. Segments not yet due
// keep their times, but none arrives before now plus the latency, nor
// before the held ones.
func (p *simPipe) release() {
	if p.blocked() || p.c.done {
		return
	}
	n := p.c.n
	cfg := n.link(p.from, p.to)
	now := n.loop.Time()
	earliest := simAddTime(now, cfg.Latency)
	free, last := now, time.Duration(0)
	for i := range p.queue {
		seg := &p.queue[i]
		if seg.at <= now { // held
			if cfg.Bandwidth > 0 && len(seg.data) > 0 {
				free = simAddTime(free, time.Duration(int64(len(seg.data))*int64(time.Second)/int64(cfg.Bandwidth)))
			}
			seg.at = simAddTime(free, cfg.Latency)
		}
		seg.at = max(seg.at, earliest, last)
		last = seg.at
	}
	p.linkFree = max(p.linkFree, free)
	if len(p.queue) > 0 {
		p.lastAt = max(p.lastAt, last)
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
			why := seg.why
			if why == "" {
				why = "the peer reset"
			}
			p.c.abort(side, why)
			return
		case seg.eof:
			unix.Shutdown(p.out, unix.SHUT_WR)
			p.queue = p.queue[1:]
			p.eofDone = true
			n.tracef("conn %d %s: EOF delivered", p.c.id, p.name)
			p.c.maybeFinish()
			continue // a RST may follow (the sender's reset after its EOF)
		}
		k, err := unix.Write(p.out, seg.data)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			if i := p.rstIndex(); err == unix.EAGAIN && i > 0 && p.queue[i].at <= n.loop.Time() {
				// A RST does not wait for room in the receiver's
				// socket: what it has not taken yet is lost with the
				// connection. What arrived before the RST and fits
				// is delivered first, as a TCP receiver queues the
				// data of the segments before a RST, and its
				// application reads them before the reset.
				p.queue = p.queue[i:]
				continue
			}
			p.waitWritable()
			return
		case err != nil: // the receiver closed its socket: its host answers with a RST
			n.tracef("conn %d %s: receiver gone", p.c.id, p.name)
			p.receiverGone()
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

// receiverGone is data reaching a receiver that closed its socket: its
// host answers with a RST, which travels back as any segment does (the
// link's latency and jitter, after what that direction already carries,
// held by a partition or a stall), so the sender sees the reset a round
// trip after its write, as over TCP, not when the data arrives. The
// direction carries nothing more meanwhile: what the sender writes is
// lost with the connection.
func (p *simPipe) receiverGone() {
	p.queue = nil
	p.unwatch()
	p.inEOF = true
	back := p.c.down
	if p == p.c.down {
		back = p.c.up
	}
	back.enqueue(simSegment{rst: true, why: "data to a closed socket"}, 0, p.c.n.link(back.from, back.to))
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
	if p.timer != nil { // a RST's (schedule): pump arms what is next
		p.timer.Cancel()
		p.timer = nil
	}
	p.pump()
}

// maybeFinish closes the relay once both directions delivered their EOF.
func (c *SimConn) maybeFinish() {
	if c.up.eofDone && c.down.eofDone {
		c.n.tracef("conn %d closed", c.id)
		c.finish(false)
	}
}

// abandon ends a connection whose dial ended (err: cancelled, refused
// by a reset, the network closed) before the SYN-ACK reached the
// client: the client's socket is closed, and the server never hears of
// the connection, as a TCP server drops a handshake the client's host
// answers with a RST.
func (c *SimConn) abandon(err error) {
	if c.done {
		return
	}
	c.n.tracef("conn %d: the dial ended in the handshake (%v); the server never sees it", c.id, err)
	c.dial = nil
	c.resetting = true
	unix.Close(c.cfd) // never handed to the client
	c.dropServerEnd()
	c.finish(false)
}

// acked is the client's ACK reaching the server: the connection waits in
// the listener's backlog for accept, or, the listener gone meanwhile, is
// reset.
func (c *SimConn) acked() {
	c.ack = nil
	if c.stalled {
		// Held with the rest of what the connection carries: it goes on
		// at Resume.
		c.ackHeld = true
		c.n.tracef("conn %d: ACK held (stall)", c.id)
		return
	}
	if c.n.partitioned(c.client, c.server) {
		// Lost; TCP would send it again (the server repeats its SYN-ACK):
		// it arrives once the partition heals.
		c.ackHeld = true
		c.n.tracef("conn %d: ACK held (partition)", c.id)
		return
	}
	c.ackHeld = false
	c.endHandshake()
	if c.done {
		return
	}
	if sl := c.sl; c.n.listener(sl.addr.String()) == sl && sl.srv.serving {
		sl.push(c)
		return
	}
	c.dropServerEnd()
	c.resetToClient("ACK to a closed listener")
}

// resetToClient is the server's host answering c's client with a RST (an
// ACK to a listener that closed, a connection in the backlog of one that
// closes): the RST travels to the client as a segment of the down
// direction (the link's latency, after what that direction carries, held
// by a partition or a stall), so the client sees the reset one latency
// after the server's host sent it. The server's end is gone already.
func (c *SimConn) resetToClient(why string) {
	if c.done {
		return
	}
	c.n.tracef("conn %d: RST toward the client (%s)", c.id, why)
	c.down.enqueue(simSegment{rst: true, why: why}, 0, c.n.link(c.down.from, c.down.to))
}

// endHandshake stops counting c as a handshake of its listener.
func (c *SimConn) endHandshake() {
	if c.ack != nil {
		c.ack.Cancel()
		c.ack = nil
	}
	if c.handshake {
		c.handshake = false
		c.sl.pending--
	}
}

// dropServerEnd closes the server's end of a connection the server never
// accepted (the network owns it), taking it out of the backlog.
func (c *SimConn) dropServerEnd() {
	if c.accepted || c.sfdGone {
		return
	}
	c.endHandshake()
	if sl := c.sl; sl != nil {
		for i, b := range sl.backlog {
			if b == c {
				sl.backlog = append(sl.backlog[:i], sl.backlog[i+1:]...)
				break
			}
		}
		if len(sl.backlog) == 0 && sl.flagged && sl.srv.listeners != nil {
			// The server's listening end (l1) is open: clear its flag.
			var b [1]byte
			unix.Read(sl.l1, b[:])
			sl.flagged = false
		}
	}
	unix.Close(c.sfd)
	c.sfdGone = true
}

// finish stops relaying and closes the network's ends.
func (c *SimConn) finish(network bool) {
	if c.done {
		return
	}
	if network {
		c.n.tracef("conn %d closed by the network", c.id)
	}
	c.dial = nil
	if !c.keepQueued {
		c.dropServerEnd()
	}
	c.endHandshake()
	l := c.n.loop
	for _, p := range []*simPipe{c.up, c.down} {
		p.unwatch()
		if !c.resetting {
			p.dropKept() // a clean close: the applications see EOF
		}
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
	delete(c.client.clientPorts, c.caddr.Port)
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
	markSimWorldFD(fds[0])
	markSimWorldFD(fds[1])
	return fds, nil
}
