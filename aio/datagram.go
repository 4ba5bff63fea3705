package aio

import (
	"fmt"
	"github.com/go-asyncio/asyncio"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// DatagramProtocol is asyncio.DatagramProtocol: ConnectionMade first,
// DatagramReceived for each datagram with its sender, ErrorReceived for a
// send or receive error that does not end the endpoint (for example
// ECONNREFUSED from an ICMP message on a connected socket), ConnectionLost
// last. It may also implement WriteFlowControl.
type DatagramProtocol interface {
	ConnectionMade(tr DatagramTransport)
	DatagramReceived(data []byte, addr net.Addr)
	ErrorReceived(err error)
	ConnectionLost(err error)
}

// DatagramTransport is asyncio.DatagramTransport.
type DatagramTransport interface {
	// SendTo sends one datagram to addr, or to the connected peer when
	// addr is nil (asyncio's sendto). It never blocks: a datagram the
	// socket cannot take now is queued. For a connected endpoint a
	// different addr is a *ValueError.
	SendTo(data []byte, addr net.Addr) error
	// Close closes after the queue is flushed; Abort closes at once.
	Close()
	Abort()
	IsClosing() bool
	// GetExtraInfo: "sockname", "peername" (connected only), "socket".
	GetExtraInfo(name string) any
	// GetWriteBufferSize counts queued bytes plus 8 per datagram, as
	// asyncio does.
	GetWriteBufferSize() int
	SetWriteBufferLimits(high, low int) error
	GetWriteBufferLimits() (low, high int)
}

type datagram struct {
	data []byte
	sa   unix.Sockaddr
}

const datagramHeaderSize = 8

// datagramTransport is asyncio's _SelectorDatagramTransport.
type datagramTransport struct {
	flowControl
	fd         int
	protocol   DatagramProtocol
	extra      map[string]any
	remote     net.Addr
	queue      []datagram
	bufferSize int
	closing    bool
	connLost   int
	fdClosed   bool
}

// CreateDatagramEndpoint creates a UDP endpoint (asyncio's
// loop.create_datagram_endpoint): bound to local if not nil, connected to
// remote if not nil (at least one is required). It returns once the
// protocol's ConnectionMade has run.
func CreateDatagramEndpoint(t *asyncio.T, factory func() DatagramProtocol, local, remote *net.UDPAddr) (DatagramTransport, DatagramProtocol, error) {
	if local == nil && remote == nil {
		return nil, nil, &asyncio.ValueError{Msg: "unexpected address family"}
	}
	family := unix.AF_INET
	for _, a := range []*net.UDPAddr{local, remote} {
		if a != nil && a.IP != nil && a.IP.To4() == nil {
			family = unix.AF_INET6
		}
	}
	fd, err := NewSocket(family, unix.SOCK_DGRAM)
	if err != nil {
		return nil, nil, err
	}
	sockaddr := func(a *net.UDPAddr) unix.Sockaddr {
		ip := a.IP
		if ip == nil {
			ip = net.IPv4zero
			if family == unix.AF_INET6 {
				ip = net.IPv6zero
			}
		}
		sa, _ := sockaddrFor(ip, a.Port)
		return sa
	}
	if local != nil {
		if err := unix.Bind(fd, sockaddr(local)); err != nil {
			unix.Close(fd)
			return nil, nil, os.NewSyscallError("bind", err)
		}
	}
	if remote != nil {
		if err := SockConnect(t, fd, sockaddr(remote)); err != nil {
			unix.Close(fd)
			return nil, nil, err
		}
	}
	p := factory()
	tr := &datagramTransport{
		flowControl: flowControl{loop: t.Loop(), high: defaultHighWater, low: defaultHighWater / 4},
		fd:          fd,
		protocol:    p,
		extra:       map[string]any{"socket": fd, "sockname": localAddr(fd, "udp")},
	}
	if remote != nil {
		tr.remote = peerAddr(fd, "udp")
		tr.extra["peername"] = tr.remote
	}
	l := t.Loop()
	waiter := asyncio.NewFuture[struct{}](l)
	l.CallSoon(func() { p.ConnectionMade(tr) })
	l.CallSoon(func() {
		if !tr.closing {
			if err := l.AddReader(fd, tr.readReady); err != nil {
				tr.fatalError(err)
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

func (tr *datagramTransport) GetExtraInfo(name string) any     { return tr.extra[name] }
func (tr *datagramTransport) IsClosing() bool                  { return tr.closing }
func (tr *datagramTransport) GetWriteBufferSize() int          { return tr.bufferSize }
func (tr *datagramTransport) GetWriteBufferLimits() (int, int) { return tr.low, tr.high }
func (tr *datagramTransport) SetWriteBufferLimits(high, low int) error {
	h, lo, err := computeWriteLimits(high, low)
	if err != nil {
		return err
	}
	tr.high, tr.low = h, lo
	tr.maybePause(tr.bufferSize, tr.protocol)
	return nil
}

func (tr *datagramTransport) readReady() {
	if tr.connLost > 0 {
		return
	}
	bp := readBufPool.Get().(*[]byte)
	defer readBufPool.Put(bp)
	n, from, err := unix.Recvfrom(tr.fd, *bp, 0)
	switch {
	case err == unix.EINTR || isWouldBlock(err):
	case err != nil:
		tr.protocol.ErrorReceived(os.NewSyscallError("recvfrom", err))
	default:
		data := append([]byte(nil), (*bp)[:n]...)
		addr := sockaddrToAddr(from, "udp")
		if addr == nil {
			addr = tr.remote
		}
		if perr := callProtocol(func() { tr.protocol.DatagramReceived(data, addr) }); perr != nil {
			tr.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "Fatal error: protocol.datagram_received() call failed.", Err: perr})
			tr.forceClose(perr)
		}
	}
}

func (tr *datagramTransport) send(d datagram) error {
	if tr.remote != nil {
		_, err := unix.SendmsgN(tr.fd, d.data, nil, nil, unix.MSG_NOSIGNAL)
		return err
	}
	return unix.Sendto(tr.fd, d.data, unix.MSG_NOSIGNAL, d.sa)
}

func (tr *datagramTransport) SendTo(data []byte, addr net.Addr) error {
	var sa unix.Sockaddr
	if tr.remote != nil {
		if addr != nil && addr.String() != tr.remote.String() {
			return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: must be None or %v", tr.remote)}
		}
	} else {
		if addr == nil {
			return &asyncio.ValueError{Msg: "Invalid address: must not be None for an unconnected endpoint"}
		}
		if sa, _ = addrToSockaddr(addr); sa == nil {
			return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: %v", addr)}
		}
	}
	if tr.connLost > 0 || tr.fdClosed {
		if tr.connLost >= logThresholdForConnLostWrites {
			slog.Warn("socket.sendto() raised exception.")
		}
		tr.connLost++
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
				tr.fatalError(err)
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
			tr.connLost++
			tr.loop.CallSoon(func() { tr.callConnectionLost(nil) })
		}
	}
}

func (tr *datagramTransport) Close() {
	if tr.closing {
		return
	}
	tr.closing = true
	tr.loop.RemoveReader(tr.fd)
	if len(tr.queue) == 0 {
		tr.connLost++
		tr.loop.CallSoon(func() { tr.callConnectionLost(nil) })
	}
}

func (tr *datagramTransport) Abort() { tr.forceClose(nil) }

func (tr *datagramTransport) fatalError(err error) {
	if !isOSError(err) {
		tr.loop.CallExceptionHandler(asyncio.ExceptionContext{Message: "Fatal error on datagram transport", Err: err})
	}
	tr.forceClose(err)
}

func (tr *datagramTransport) forceClose(err error) {
	if tr.connLost > 0 {
		return
	}
	if len(tr.queue) > 0 {
		tr.queue, tr.bufferSize = nil, 0
		tr.loop.RemoveWriter(tr.fd)
	}
	if !tr.closing {
		tr.closing = true
		tr.loop.RemoveReader(tr.fd)
	}
	tr.connLost++
	tr.loop.CallSoon(func() { tr.callConnectionLost(err) })
}

func (tr *datagramTransport) callConnectionLost(err error) {
	defer func() {
		if !tr.fdClosed {
			tr.fdClosed = true
			tr.loop.RemoveReader(tr.fd)
			tr.loop.RemoveWriter(tr.fd)
			unix.Close(tr.fd)
		}
	}()
	tr.protocol.ConnectionLost(err)
}
