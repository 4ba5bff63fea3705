//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// DatagramProtocol is asyncio.DatagramProtocol: ConnectionMade first,
// DatagramReceived for each datagram with its sender (a *net.UDPAddr, or
// on a Unix endpoint a *net.UnixAddr, nil for a sender whose socket has
// no name), ErrorReceived for a send or receive error that does not end
// the endpoint (for example ECONNREFUSED from an ICMP message on a
// connected socket), ConnectionLost last. It may also implement
// WriteFlowControl.
type DatagramProtocol interface {
	ConnectionMade(tr DatagramTransport)
	DatagramReceived(data []byte, addr net.Addr)
	ErrorReceived(err error)
	ConnectionLost(err error)
}

// DatagramTransport is asyncio.DatagramTransport. Its methods must be
// called on the loop.
type DatagramTransport interface {
	// SendTo sends one datagram to addr (a *net.UDPAddr, or on a Unix
	// endpoint a *net.UnixAddr), or to the connected peer when addr is
	// nil (asyncio's sendto). It never blocks: a datagram the socket
	// cannot take now is queued. For a connected endpoint a different
	// addr is a *ValueError, and so is an addr of the other kind (a
	// *net.UnixAddr on a UDP endpoint, a *net.UDPAddr on a Unix one) or
	// an IP of no IP's length.
	SendTo(data []byte, addr net.Addr) error
	// Close closes after the queue is flushed.
	Close()
	// Abort closes at once, dropping the queue.
	Abort()
	// IsClosing reports whether the transport is closing or closed.
	IsClosing() bool
	// ExtraInfo returns "sockname", "peername" (connected only), "socket"
	// (the fd, int), or nil.
	ExtraInfo(name string) any
	// WriteBufferSize counts queued bytes plus 8 per datagram, as
	// asyncio does.
	WriteBufferSize() int
	// SetWriteBufferLimits sets the water marks, as Transport's.
	SetWriteBufferLimits(high, low int) error
	// WriteBufferLimits returns (high, low), as Transport's.
	WriteBufferLimits() (high, low int)
}

type datagram struct {
	data []byte
	sa   unix.Sockaddr
}

const datagramHeaderSize = 8

// datagramTransport is asyncio's _SelectorDatagramTransport.
type datagramTransport struct {
	fdTransport
	protocol DatagramProtocol
	// network is "udp", or "unixgram" for a Unix datagram socket: the
	// kind of address SendTo takes and DatagramReceived gets.
	network string
	remote  net.Addr
	// remoteSA is where SendTo sends a datagram without an address when
	// the socket is not connected to remote: WithAllowBroadcast's
	// endpoint, as asyncio's r_addr without sock_connect. nil when the
	// socket is connected (send without an address) or has no remote.
	remoteSA   unix.Sockaddr
	queue      []datagram
	bufferSize int
	sim        *simEndpoint // on a simulated network (sim_datagram.go)
}

var _ DatagramTransport = (*datagramTransport)(nil)

func newDatagramTransport(l *asyncio.Loop, fd int, p DatagramProtocol, extra extraInfo) *datagramTransport {
	tr := &datagramTransport{protocol: p, network: "udp"}
	tr.fdTransport.init(l, fd, tr, extra)
	return tr
}

// CreateDatagramEndpoint creates a UDP endpoint (asyncio's
// loop.create_datagram_endpoint): bound to local if not nil, connected to
// remote if not nil (at least one is required, or WithFamily, which
// makes an unbound endpoint of its family), or on WithSocket's
// datagram socket as it is (asyncio's sock=; local and remote nil), which
// may also be a Unix datagram socket, as asyncio's sock= may: the
// endpoint is then as CreateUnixDatagramEndpoint's. It
// returns once the protocol's ConnectionMade has run. Options:
// WithReusePort, WithAllowBroadcast, WithFamily, WithSocket. A nil factory, a port
// outside 0-65535, an IP neither 4 nor 16 bytes long (nil is the
// wildcard), or a local and a remote address of different families (IPv4
// and IPv6) is a *ValueError.
//
// With WithAllowBroadcast, the socket is not connected to remote, as
// asyncio's allow_broadcast=True skips its sock_connect: remote (which
// may be a broadcast address) is only where SendTo sends when its addr is
// nil, datagrams from every sender are received (the replies to a
// broadcast come from each host's own address), and there is no
// "peername".
func CreateDatagramEndpoint(t *asyncio.T, factory func() DatagramProtocol, local, remote *net.UDPAddr, opts ...Option) (DatagramTransport, DatagramProtocol, error) {
	t.Loop() // a nil t panics here, before a socket is made
	if factory == nil {
		return nil, nil, errNilFactory("CreateDatagramEndpoint")
	}
	for _, a := range []*net.UDPAddr{local, remote} {
		if a == nil {
			continue
		}
		if err := checkPort(a.Port); err != nil {
			return nil, nil, err
		}
		if !validIPLen(a.IP) {
			return nil, nil, &asyncio.ValueError{Msg: fmt.Sprintf("CreateDatagramEndpoint: invalid IP address %v: %d bytes, not 4 or 16", a.IP, len(a.IP))}
		}
	}
	o, err := buildOptions("CreateDatagramEndpoint", opts)
	if err != nil {
		return nil, nil, err
	}
	if o.sock >= 0 {
		// asyncio's sock=: the socket as it is, checked before it is
		// touched; the caller keeps it if this fails.
		var problems []string
		if local != nil {
			problems = append(problems, fmt.Sprintf("local_addr=%v", local))
		}
		if remote != nil {
			problems = append(problems, fmt.Sprintf("remote_addr=%v", remote))
		}
		network, err := adoptDatagramSocket(o.sock, problems, o, false)
		if err != nil {
			return nil, nil, err
		}
		p, err := newProtocol("CreateDatagramEndpoint", factory)
		if err != nil {
			return nil, nil, err // the caller keeps the socket
		}
		return startDatagramEndpoint(t, o.sock, network, p, false)
	}
	if local == nil && remote == nil && o.family != unix.AF_INET && o.family != unix.AF_INET6 {
		// asyncio: without addresses only a family says what to make.
		return nil, nil, &asyncio.ValueError{Msg: "unexpected address family"}
	}
	for _, a := range []*net.UDPAddr{local, remote} {
		if a != nil && a.IP != nil {
			// getaddrinfo with the family refuses an address of the other.
			if _, err := byFamily(a.IP.String(), []net.IP{a.IP}, o.family); err != nil {
				return nil, nil, err
			}
		}
	}
	if local != nil && remote != nil && local.IP != nil && remote.IP != nil && (local.IP.To4() == nil) != (remote.IP.To4() == nil) {
		// asyncio finds no (family, proto) pair for both addresses.
		return nil, nil, &asyncio.ValueError{Msg: fmt.Sprintf("can not get address information: the local address %v and the remote address %v are of different families", local, remote)}
	}
	if o.simHost != nil {
		return o.simHost.datagramEndpoint(t, factory, local, remote)
	}
	family := unix.AF_INET
	for _, a := range []*net.UDPAddr{local, remote} {
		if a != nil && a.IP != nil && a.IP.To4() == nil {
			family = unix.AF_INET6
		}
	}
	if o.family != unix.AF_UNSPEC {
		family = o.family // (the addresses are of it, checked above)
	}
	fd, err := newSocket(family, unix.SOCK_DGRAM)
	if err != nil {
		return nil, nil, err
	}
	remoteSA, err := setupDatagramSocket(t, fd, family, local, remote, o)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	p, err := newProtocol("CreateDatagramEndpoint", factory)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	if remoteSA != nil {
		return startUnconnectedDatagramEndpoint(t, fd, p, remoteSA)
	}
	return startDatagramEndpoint(t, fd, "udp", p, remote != nil)
}

// startUnconnectedDatagramEndpoint is startDatagramEndpoint for a UDP
// socket that was not connected to its remote address remoteSA
// (WithAllowBroadcast): SendTo's default destination, with no
// "peername".
func startUnconnectedDatagramEndpoint(t *asyncio.T, fd int, p DatagramProtocol, remoteSA unix.Sockaddr) (DatagramTransport, DatagramProtocol, error) {
	return startDatagramEndpointWith(t, fd, "udp", p, false, func(tr *datagramTransport) {
		tr.remote = sockaddrToAddr(remoteSA, "udp")
		tr.remoteSA = remoteSA
	})
}

// startDatagramEndpoint makes the transport of fd, a datagram socket of
// network ("udp" or "unixgram") that is bound and connected as it should
// be, for p, and returns once p's ConnectionMade has run; the transport
// owns fd. connected says that a remote address was given; otherwise
// (WithSocket) the endpoint is connected if the socket has a peer.
func startDatagramEndpoint(t *asyncio.T, fd int, network string, p DatagramProtocol, connected bool) (DatagramTransport, DatagramProtocol, error) {
	return startDatagramEndpointWith(t, fd, network, p, connected, nil)
}

// startDatagramEndpointWith is startDatagramEndpoint calling setup on the
// transport, if not nil, before the protocol sees it.
func startDatagramEndpointWith(t *asyncio.T, fd int, network string, p DatagramProtocol, connected bool, setup func(*datagramTransport)) (DatagramTransport, DatagramProtocol, error) {
	tr := newDatagramTransport(t.Loop(), fd, p, extraInfo{socket: true, sockname: localAddr(fd, network)})
	tr.network = network
	if peer := peerAddr(fd, network); connected || peer != nil {
		tr.remote = peer
		tr.extra.peername = peer
	}
	if setup != nil {
		setup(tr)
	}
	l := t.Loop()
	waiter := asyncio.NewFuture[struct{}](l)
	l.CallSoon(func() { p.ConnectionMade(tr) })
	l.CallSoon(func() {
		if !tr.closing {
			if err := l.AddReader(fd, tr.readReady); err != nil {
				tr.fatalError(err, "Fatal error on datagram transport")
			}
		}
	})
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

// adoptDatagramSocket checks WithSocket's fd for CreateDatagramEndpoint
// and CreateUnixDatagramEndpoint, as asyncio checks sock=: a datagram
// socket (a Unix one if unixOnly), without the arguments that would
// modify it (problems, and the options); then makes it non-blocking and
// returns its network, "udp" or "unixgram". Nothing is changed when it
// fails: the caller keeps fd.
func adoptDatagramSocket(fd int, problems []string, o *options, unixOnly bool) (string, error) {
	if o.reusePort {
		problems = append(problems, "reuse_port=True")
	}
	if o.allowBroadcast {
		problems = append(problems, "allow_broadcast=True")
	}
	if len(problems) > 0 {
		return "", &asyncio.ValueError{Msg: fmt.Sprintf("socket modifier keyword arguments can not be used when sock is specified. (%s)", strings.Join(problems, ", "))}
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_DGRAM {
		return "", &asyncio.ValueError{Msg: fmt.Sprintf("A datagram socket was expected, got fd %d", fd)}
	}
	network := "udp"
	if sa, err := getsockname(fd); err == nil {
		if _, ok := sa.(*unix.SockaddrUnix); ok {
			network = "unixgram"
		}
	}
	if unixOnly && network != "unixgram" {
		return "", &asyncio.ValueError{Msg: fmt.Sprintf("A UNIX Domain Datagram Socket was expected, got fd %d (a UDP socket is CreateDatagramEndpoint's)", fd)}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return "", os.NewSyscallError("fcntl", err)
	}
	return network, nil
}

// setupDatagramSocket sets the options, binds and connects, in asyncio's
// order. With WithAllowBroadcast a remote address is not connected to,
// as in asyncio (a socket connected to a broadcast address would take
// replies from that address only): its socket address is returned, for
// the transport to send to.
func setupDatagramSocket(t *asyncio.T, fd, family int, local, remote *net.UDPAddr, o *options) (unconnectedRemote unix.Sockaddr, err error) {
	if o.reusePort {
		if err := setReusePort(fd); err != nil {
			return nil, err
		}
	}
	if o.allowBroadcast {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BROADCAST, 1); err != nil {
			return nil, os.NewSyscallError("setsockopt", err)
		}
	}
	sockaddr := func(a *net.UDPAddr) unix.Sockaddr {
		ip := a.IP
		if ip == nil {
			ip = net.IPv4zero
			if family == unix.AF_INET6 {
				ip = net.IPv6zero
			}
		}
		sa, _ := sockaddrForZone(ip, a.Port, a.Zone)
		return sa
	}
	if local != nil {
		if err := unix.Bind(fd, sockaddr(local)); err != nil {
			return nil, os.NewSyscallError("bind", err)
		}
	}
	if remote == nil {
		return nil, nil
	}
	if o.allowBroadcast {
		return sockaddr(remote), nil
	}
	return nil, sockConnect(t, fd, sockaddr(remote))
}

func (tr *datagramTransport) buffered() int            { return tr.bufferSize }
func (tr *datagramTransport) dropBuffer()              { tr.queue, tr.bufferSize = nil, 0 }
func (tr *datagramTransport) protocolOf() any          { return tr.protocol }
func (tr *datagramTransport) connectionLost(err error) { tr.protocol.ConnectionLost(err) }

func (tr *datagramTransport) readReady() {
	if tr.connLost > 0 {
		return
	}
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	var n int
	var from unix.Sockaddr
	var err error
	if tr.network == "unixgram" {
		n, from, err = recvfromUnix(tr.fd, *bp)
	} else {
		n, from, err = unix.Recvfrom(tr.fd, *bp, 0)
	}
	switch {
	case err == unix.EINTR || isWouldBlock(err):
	case err != nil:
		tr.protocol.ErrorReceived(os.NewSyscallError("recvfrom", err))
	default:
		data := append([]byte(nil), (*bp)[:n]...)
		var addr net.Addr
		if tr.network == "unixgram" {
			addr = unixSender(from)
		} else if addr = sockaddrToAddr(from, "udp"); addr == nil {
			addr = tr.remote
		}
		// Not contained: as asyncio's _read_ready, which calls
		// datagram_received outside its try, a panic goes to the loop's
		// exception handler ("Exception in callback") and the endpoint
		// stays open for the next datagram.
		tr.protocol.DatagramReceived(data, addr)
	}
}

func (tr *datagramTransport) send(d datagram) error {
	if tr.sim != nil {
		return tr.sim.send(d.data, d.sa)
	}
	if d.sa == nil { // connected
		_, err := unix.SendmsgN(tr.fd, d.data, nil, nil, unix.MSG_NOSIGNAL)
		return err
	}
	return unix.Sendto(tr.fd, d.data, unix.MSG_NOSIGNAL, d.sa)
}

// SendTo sends or queues one datagram.
func (tr *datagramTransport) SendTo(data []byte, addr net.Addr) error {
	var sa unix.Sockaddr
	if tr.network == "unixgram" {
		if err := checkUnixDestination(addr); err != nil {
			return err
		}
	} else if _, ok := addr.(*net.UnixAddr); ok {
		// A mistake in the call, not a network error for ErrorReceived
		// (asyncio's socket.sendto raises TypeError, which its sendto
		// takes for a fatal error); refused as the Unix endpoint refuses
		// a *net.UDPAddr.
		return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: %v (%T) on a UDP endpoint, which sends to a *net.UDPAddr", addr, addr)}
	}
	if tr.remote != nil {
		if addr != nil && !tr.isRemote(addr) {
			return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: must be None or %v", tr.remote)}
		}
		sa = tr.remoteSA
	} else {
		if addr == nil {
			return &asyncio.ValueError{Msg: "Invalid address: must not be None for an unconnected endpoint"}
		}
		if sa, _ = addrToSockaddr(addr); sa == nil {
			return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: %v", addr)}
		}
	}
	if tr.droppedWrite("socket.sendto()") {
		return nil
	}
	d := datagram{data: append([]byte(nil), data...), sa: sa}
	if len(tr.queue) == 0 {
		err := tr.send(d)
		switch {
		case err == nil:
			return nil
		case isWouldBlock(err) || err == unix.EINTR:
			if err := tr.loop.AddWriter(tr.fd, tr.sendtoReady); err != nil {
				tr.fatalError(err, "Fatal error on datagram transport")
				return nil
			}
		default:
			tr.protocol.ErrorReceived(os.NewSyscallError("sendto", err))
			return nil
		}
	}
	tr.queue = append(tr.queue, d)
	tr.bufferSize += len(d.data) + datagramHeaderSize
	tr.maybePause(tr.bufferSize, tr.protocol)
	return nil
}

func (tr *datagramTransport) sendtoReady() {
	for len(tr.queue) > 0 {
		d := tr.queue[0]
		err := tr.send(d)
		if isWouldBlock(err) || err == unix.EINTR {
			break
		}
		tr.queue = tr.queue[1:]
		tr.bufferSize -= len(d.data) + datagramHeaderSize
		if err != nil {
			tr.protocol.ErrorReceived(os.NewSyscallError("sendto", err))
			return
		}
	}
	tr.maybeResume(tr.bufferSize, tr.protocol)
	if len(tr.queue) == 0 {
		tr.loop.RemoveWriter(tr.fd)
		if tr.closing {
			tr.connectionLostNow(nil)
		}
	}
}
