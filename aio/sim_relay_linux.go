//go:build linux

package aio

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/go-asyncio/asyncio/internal/hooks"
)

// How the relay reads a sender on Linux: it keeps the last byte of what
// it took (relayed already, but left unread in the network's end), so
// that a reset reaches the sender's application even after it
// half-closed. A socket pair can only report a reset (ECONNRESET) to a
// socket whose peer closes with unread data, and the network cannot
// write into its own end once the application shut down its sending
// side (WriteEOF): without that byte, a reset after a WriteEOF would look
// like a clean EOF. The byte is read before a clean close (both EOFs
// delivered, or SimNetwork.Close), so that one gives EOF.
//
// With a byte always left unread the network's end stays readable, so
// it is watched edge-triggered, through an epoll descriptor of the
// network's own that the loop watches: an event for each write, shutdown
// or close of the sender, each raised synchronously by that system call,
// so runs stay deterministic.

// watchRelay starts watching p.in.
func (n *SimNetwork) watchRelay(p *simPipe) error {
	if n.ep < 0 {
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return os.NewSyscallError("epoll_create1", err)
		}
		markSimWorldFD(ep)
		if err := n.loop.AddReader(ep, n.relayReady); err != nil {
			unix.Close(ep)
			return err
		}
		n.ep = ep
		n.epPipes = map[int]*simPipe{}
		n.removePrePoll = hooks.AddPrePoll(n.loop, n.prePoll)
	}
	op := unix.EPOLL_CTL_ADD
	if p.resetWatch { // registered for a reset only (pauseRelay): all events again
		op = unix.EPOLL_CTL_MOD
		p.resetWatch = false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(p.in)}
	if err := unix.EpollCtl(n.ep, op, p.in, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	n.epPipes[p.in] = p
	return nil
}

// pauseRelay keeps p.in registered for its errors alone (EPOLLERR, which
// epoll always reports): a reset of the sender while the direction is
// paused (relayReady). It reports whether it could.
func (n *SimNetwork) pauseRelay(p *simPipe) bool {
	if n.ep < 0 {
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLET, Fd: int32(p.in)}
	return unix.EpollCtl(n.ep, unix.EPOLL_CTL_MOD, p.in, &ev) == nil
}

// unwatchRelay stops watching p.in.
func (n *SimNetwork) unwatchRelay(p *simPipe) {
	if n.ep < 0 {
		return
	}
	unix.EpollCtl(n.ep, unix.EPOLL_CTL_DEL, p.in, nil)
	delete(n.epPipes, p.in)
}

// relayReady reads the senders whose events came, in the order they
// came (the order of the system calls that raised them).
func (n *SimNetwork) relayReady() {
	var evs [64]unix.EpollEvent
	k, err := unix.EpollWait(n.ep, evs[:], 0)
	if err != nil {
		return // EINTR: the loop polls again
	}
	for _, ev := range evs[:k] {
		if p := n.epPipes[int(ev.Fd)]; p != nil {
			if p.resetWatch {
				// Paused: only the sender's reset matters now (its EOF
				// waits behind what it wrote).
				if ev.Events&unix.EPOLLERR != 0 {
					if e, err := unix.GetsockoptInt(p.in, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && unix.Errno(e) == unix.ECONNRESET {
						p.senderReset()
					}
				}
				continue
			}
			p.events, p.evKnown = ev.Events, true
			p.readReady()
			p.evKnown = false
		}
	}
}

// prePoll relays, before each poll of the loop, what the applications
// wrote (or shut down, or closed) since the last one, and delivers at
// once what a zero-latency link makes due now: as a kernel's loopback
// moves data inside send(), the receiver is ready in the very poll that
// follows the write, not two iterations later (one to read the sender
// through ep, one for the delivery timer).
func (n *SimNetwork) prePoll() {
	if n.ep < 0 {
		return
	}
	n.relaying = true
	defer func() { n.relaying = false }()
	n.relayReady()
}

// closeRelayPoller closes the epoll descriptor; unregister is false when
// the loop closes (it watches nothing any more).
func (n *SimNetwork) closeRelayPoller(unregister bool) {
	if n.removePrePoll != nil {
		n.removePrePoll()
		n.removePrePoll = nil
	}
	if n.ep < 0 {
		return
	}
	if unregister {
		n.loop.RemoveReader(n.ep)
	}
	unix.Close(n.ep)
	n.ep = -1
	n.epPipes = nil
}

// take reads up to max bytes of what the sender wrote since the last
// take: data, more if there may be more to read now (edge-triggered,
// nothing tells again), no data and a nil error at the sender's EOF; an
// error is the sender's reset, or EAGAIN.
func (p *simPipe) take(max int) (data []byte, more bool, err error) {
	peek := p.c.n.relayBuf()[:p.kept+max]
	got, _, err := unix.Recvfrom(p.in, peek, unix.MSG_PEEK)
	if err != nil {
		return nil, false, err // nothing kept: the sender's reset, or EAGAIN
	}
	if got == p.kept {
		if got == 0 {
			return nil, false, nil // EOF
		}
		// Only the kept byte: the sender's EOF or reset shows in its
		// events.
		switch ev := p.senderEvents(); {
		case ev&unix.EPOLLERR != 0:
			e, _ := unix.GetsockoptInt(p.in, unix.SOL_SOCKET, unix.SO_ERROR)
			if e == 0 {
				e = int(unix.ECONNRESET)
			}
			return nil, false, syscall.Errno(e)
		case ev&(unix.EPOLLRDHUP|unix.EPOLLHUP) != 0:
			return nil, false, nil
		}
		return nil, false, unix.EAGAIN
	}
	data = append([]byte(nil), peek[p.kept:got]...)
	// Read all but the last byte (the previous kept byte first), which
	// stays as the new kept one...
	consume(p.in, peek[:got-1])
	p.kept = 1
	// ...unless its buffer keeps the sender from being writable (an
	// application that shrank SO_SNDBUF): then it goes too, until the
	// next take.
	if !simWritable(p.app) {
		p.dropKept()
	}
	if got == len(peek) {
		return data, true, nil
	}
	// All read; the event may also have told of the sender's EOF or
	// reset, which no event tells again: read on to see it.
	return data, p.senderEvents()&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0, nil
}

// senderEvents returns in's events (epoll's bits, which poll's equal on
// Linux): those of the epoll event that called readReady (nothing
// happens to in between), else poll's.
func (p *simPipe) senderEvents() uint32 {
	if p.evKnown {
		return p.events
	}
	fds := []unix.PollFd{{Fd: int32(p.in), Events: unix.POLLIN | unix.POLLRDHUP}}
	unix.Poll(fds, 0)
	return uint32(uint16(fds[0].Revents))
}

// dropKept reads the kept byte, so that closing p.in is a clean close.
func (p *simPipe) dropKept() {
	if p.kept > 0 {
		consume(p.in, make([]byte, p.kept))
		p.kept = 0
	}
}

// consume reads len(buf) bytes that are known to be in fd.
func consume(fd int, buf []byte) {
	for len(buf) > 0 {
		k, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || k <= 0 {
			return
		}
		buf = buf[k:]
	}
}

// simWritable reports whether fd polls writable now.
func simWritable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	return fds[0].Revents&unix.POLLOUT != 0
}
