//go:build unix

package aio

import (
	"net"
	"os"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Datagrams on the simulated network: CreateDatagramEndpoint with
// WithNetwork makes an ordinary datagram transport whose sends go to the
// network instead of a socket, and whose protocol the network calls with
// each datagram that arrives. Each datagram is delayed by the link's
// latency and its own jitter (so datagrams overtake each other), lost with
// the link's Loss probability or to a partition (one the link is in when
// the datagram is sent, or when it arrives), and duplicated with its
// Duplicate probability, every draw from the network's seeded source.
// As on a real host, localhost and the loopback and wildcard addresses
// reach the sending host itself, a datagram larger than UDP over IPv4
// carries (65,507 bytes) is refused with EMSGSIZE (through
// ErrorReceived), one to the broadcast address 255.255.255.255 with
// EACCES (the network has no SO_BROADCAST: WithAllowBroadcast is
// refused), one to port 0 with EINVAL, and a closed endpoint's address
// stays taken until its ConnectionLost has run.

// simEndpoint is a datagram endpoint bound on the network.
type simEndpoint struct {
	host   *SimHost
	addr   *net.UDPAddr
	remote *net.UDPAddr // connected: sends go there, only its datagrams arrive
	tr     *datagramTransport
	// sockErr is the error an ICMP message left pending, as a real
	// socket's sk_err: one slot, which the next send (failing, the
	// datagram not sent) or the loop's next read reports, and clears.
	sockErr error
}

// gone reports whether the endpoint no longer holds its address: as a
// real socket's, from when its descriptor is closed, after ConnectionLost
// (a Close or Abort only schedules that).
func (e *simEndpoint) gone() bool { return e.tr.fdClosed }

// simMaxDatagram is the largest UDP payload over IPv4: 65,535 bytes less
// the IP and UDP headers.
const simMaxDatagram = 65535 - 20 - 8

// datagramEndpoint is CreateDatagramEndpoint on the network.
func (h *SimHost) datagramEndpoint(t *asyncio.T, factory func() DatagramProtocol, local, remote *net.UDPAddr) (DatagramTransport, DatagramProtocol, error) {
	n := h.n
	if err := n.check(t.Loop()); err != nil {
		return nil, nil, err
	}
	port := 0
	if local != nil {
		if local.IP != nil && !h.owns(local.IP.String()) {
			return nil, nil, os.NewSyscallError("bind", unix.EADDRNOTAVAIL)
		}
		port = local.Port
	}
	if port == 0 {
		port = h.port()
	}
	addr := &net.UDPAddr{IP: h.ip, Port: port}
	if e := n.endpoints[addr.String()]; port == 0 || (e != nil && !e.gone()) {
		return nil, nil, os.NewSyscallError("bind", unix.EADDRINUSE)
	}
	var raddr *net.UDPAddr
	if remote != nil {
		if remote.IP.Equal(net.IPv4bcast) {
			// As the kernel: no SO_BROADCAST (which the network does
			// not offer), no route to the broadcast address.
			return nil, nil, os.NewSyscallError("connect", unix.EACCES)
		}
		to := h.resolve(remote.IP.String())
		if remote.IP == nil {
			to = h // as a real socket connects to 0.0.0.0
		}
		if to == nil {
			return nil, nil, os.NewSyscallError("connect", unix.ENETUNREACH)
		}
		raddr = &net.UDPAddr{IP: to.ip, Port: remote.Port}
		if remote.IP == nil {
			raddr.IP = net.IPv4(127, 0, 0, 1).To4()
		} else if _, lo := selfAddrs(remote.IP.String()); lo != nil {
			raddr.IP = lo // connected through loopback: the peer is the loopback address
		}
	}
	// The transport owns a descriptor, as every fdTransport does, for its
	// lifecycle alone: one end of a socket pair nobody writes to.
	fds, err := simSocketpair()
	if err != nil {
		return nil, nil, err
	}
	e := &simEndpoint{host: h, addr: addr, remote: raddr}
	p, err := newProtocol("CreateDatagramEndpoint", factory)
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, err
	}
	tr := newDatagramTransport(t.Loop(), fds[0], p, extraInfo{socket: true, sockname: addr})
	tr.sim = e
	e.tr = tr
	n.peers = append(n.peers, fds[1])
	if raddr != nil {
		tr.remote = raddr
		tr.extra.peername = raddr
	}
	n.endpoints[addr.String()] = e
	n.tracef("udp endpoint %s", addr)
	l := t.Loop()
	waiter := asyncio.NewFuture[struct{}](l)
	l.CallSoon(func() { p.ConnectionMade(tr) })
	l.CallSoon(func() {
		if !waiter.Done() {
			waiter.SetResult(struct{}{})
		}
	})
	if _, err := waiter.Await(t); err != nil {
		tr.Abort()
		return nil, nil, err
	}
	return tr, p, nil
}

// send is the transport's send on the network: never blocks.
func (e *simEndpoint) send(data []byte, sa unix.Sockaddr) error {
	n := e.host.n
	if n.closed {
		return ErrSimNetworkClosed
	}
	if len(data) > simMaxDatagram {
		return unix.EMSGSIZE
	}
	to := e.remote
	if to == nil {
		a, _ := sockaddrToAddr(sa, "udp").(*net.UDPAddr)
		if a == nil {
			return unix.EAFNOSUPPORT
		}
		if a.Port == 0 {
			return unix.EINVAL // as udp_sendmsg: no datagram to port 0
		}
		to = a
	}
	if to.IP.Equal(net.IPv4bcast) {
		return unix.EACCES // as the kernel without SO_BROADCAST
	}
	if err := e.sockErr; err != nil { // as sock_alloc_send_pskb: the pending error, nothing sent
		e.sockErr = nil
		return err
	}
	dst := e.host.resolve(to.IP.String())
	if dst == nil {
		n.tracef("udp %s -> %s: %d bytes, no such host", e.addr, to, len(data))
		return nil // lost on the way, as to an address nobody has
	}
	cfg := n.link(e.host, dst)
	copies := 1
	if n.partitioned(e.host, dst) {
		n.tracef("udp %s -> %s: %d bytes lost (partition)", e.addr, to, len(data))
		return nil
	}
	if cfg.Loss > 0 && n.rng.Float64() < cfg.Loss {
		n.tracef("udp %s -> %s: %d bytes lost", e.addr, to, len(data))
		return nil
	}
	if cfg.Duplicate > 0 && n.rng.Float64() < cfg.Duplicate {
		copies = 2
	}
	for i := range copies {
		d := n.delay(e.host, dst)
		if i == 0 {
			n.tracef("udp %s -> %s: %d bytes sent, due at %v", e.addr, to, len(data), simAddTime(n.loop.Time(), d))
		} else {
			n.tracef("udp %s -> %s: %d bytes duplicated, due at %v", e.addr, to, len(data), simAddTime(n.loop.Time(), d))
		}
		from := e.addr
		if lo, _ := selfAddrs(to.IP.String()); lo != nil {
			// Sent to a loopback address: it comes from the loopback
			// address, as on a real host (for a socket not bound to
			// another address of its own, which this model does not tell
			// apart).
			from = &net.UDPAddr{IP: lo, Port: e.addr.Port}
		}
		dest := &net.UDPAddr{IP: dst.ip, Port: to.Port}
		if d == 0 {
			// On the spot, as on a real host: the datagram is in the
			// receiving socket (or refused) when the send returns, so
			// the receiver closing next does not bounce it.
			if r := n.arriveDatagram(e, from, dest, data); r != nil {
				n.loop.CallSoon(func() { n.deliverDatagram(r, from, dest, data) })
			}
			continue
		}
		n.loop.CallLater(d, func() {
			if !n.closed && n.partitioned(e.host, dst) {
				// The link was cut while it travelled: lost, as a packet
				// on a wire that breaks (a stream's segment due in a
				// partition is held for TCP to send again; a datagram
				// has nobody to send it again).
				n.tracef("udp %s -> %s: %d bytes lost (partition)", from, dest, len(data))
				return
			}
			if r := n.arriveDatagram(e, from, dest, data); r != nil {
				n.deliverDatagram(r, from, dest, data)
			}
		})
	}
	return nil
}

// deliverDatagram hands a datagram that reached e to its protocol.
func (n *SimNetwork) deliverDatagram(e *simEndpoint, from, dest *net.UDPAddr, data []byte) {
	if n.closed {
		return
	}
	n.tracef("udp %s -> %s: %d bytes delivered", from, dest, len(data))
	e.tr.deliver(append([]byte(nil), data...), from)
}

// arriveDatagram returns the endpoint bound at dest that takes a datagram
// from from, or nil; a connected sender whose datagram finds none gets
// ECONNREFUSED (the ICMP port unreachable) after the way back.
func (n *SimNetwork) arriveDatagram(src *simEndpoint, from, dest *net.UDPAddr, data []byte) *simEndpoint {
	if n.closed {
		return nil
	}
	e := n.endpoints[dest.String()]
	if e != nil && e.gone() {
		delete(n.endpoints, dest.String())
		e = nil
	}
	if e == nil || (e.remote != nil && e.remote.String() != from.String()) {
		n.tracef("udp %s -> %s: %d bytes, port unreachable", from, dest, len(data))
		if src.remote != nil {
			at := n.lookup(dest.IP.String())
			back := n.delay(at, src.host)
			if back == 0 {
				src.icmpError(unix.ECONNREFUSED) // on the spot, as on loopback
			} else {
				n.loop.CallLater(back, func() {
					if !n.closed && n.partitioned(at, src.host) { // cut on its way back: lost
						n.tracef("udp %s -> %s: port unreachable lost (partition)", dest, src.addr)
						return
					}
					src.icmpError(unix.ECONNREFUSED)
				})
			}
		}
		return nil
	}
	return e
}

// icmpError is an ICMP error reaching e: as on a real socket it is left
// pending in one slot (a second overwrites the first), and reported once,
// by the next send or, if none comes first, by the loop's next read of
// the socket (the next iteration), as ErrorReceived from recvfrom. So
// three datagrams sent at once to a closed port give a real socket's
// errors: the second send fails (the first's error), the third is sent,
// and its error comes from the read.
func (e *simEndpoint) icmpError(err error) {
	if e.gone() {
		return
	}
	scheduled := e.sockErr != nil // a read is due already
	e.sockErr = err
	if scheduled {
		return
	}
	e.host.n.loop.CallSoon(func() {
		if err := e.sockErr; err != nil && !e.gone() && !e.tr.closing { // Close removes a real one's reader
			e.sockErr = nil
			e.tr.protocol.ErrorReceived(os.NewSyscallError("recvfrom", err))
		}
	})
}

// deliver is readReady for a simulated datagram.
func (tr *datagramTransport) deliver(data []byte, from net.Addr) {
	if tr.connLost > 0 {
		return
	}
	tr.protocol.DatagramReceived(data, from) // a panic is the loop's, as in readReady
}
