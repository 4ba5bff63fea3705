//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// CreateUnixDatagramEndpoint creates a Unix datagram endpoint (asyncio's
// loop.create_datagram_endpoint with family=socket.AF_UNIX): its socket
// is bound to the path local unless it is "", and connected to the path
// remote unless it is "". With both "" the socket is unbound, as
// asyncio's with neither address: it can send, but has no name to be
// answered at. With WithSocket (asyncio's sock=) the endpoint is made on
// fd, a Unix datagram socket, as it is, and both paths must be "". It
// returns once the protocol's ConnectionMade has run. Options: WithSocket.
//
// As asyncio does, a socket file at local is removed before the bind (a
// stale one: Close leaves the file in place, as asyncio's does); any other
// file there stays, and the bind fails with EADDRINUSE. On Linux a path
// that begins with a NUL or "@" is an abstract name, which has no file.
//
// Addresses are *net.UnixAddr of network "unixgram", an abstract name
// spelt with "@" (asyncio has bytes with a NUL): the "sockname" extra
// info (Name "" when unbound, asyncio's empty string), "peername" (connected only),
// SendTo's addr (nil or the peer for a connected endpoint; another type
// is a *ValueError), and DatagramReceived's addr, which is nil for a
// sender whose socket has no name (asyncio's None).
//
// Before anything is changed: a nil factory, a path with a NUL byte that
// is not an abstract name, WithSocket with a path or with a socket that is
// not a Unix datagram socket are a *ValueError, and a path longer than
// sockaddr_un takes is a *net.AddrError ("AF_UNIX path too long");
// WithReusePort, WithAllowBroadcast and WithNetwork are refused with a
// *ValueError naming the option, as options that do not apply: asyncio's
// reuse_port fails for a Unix socket on Linux (ValueError) and its
// allow_broadcast has no effect on one, and the simulated network has no
// Unix sockets.
func CreateUnixDatagramEndpoint(t *asyncio.T, factory func() DatagramProtocol, local, remote string, opts ...Option) (DatagramTransport, DatagramProtocol, error) {
	const call = "CreateUnixDatagramEndpoint"
	t.Loop() // a nil t panics here, before a socket or a file is touched
	if factory == nil {
		return nil, nil, errNilFactory(call)
	}
	o, err := buildOptions(call, opts)
	if err != nil {
		return nil, nil, err
	}
	if o.sock >= 0 {
		// asyncio's sock=: checked before it is touched; the caller
		// keeps it if this fails.
		var problems []string
		if local != "" {
			problems = append(problems, fmt.Sprintf("local_addr=%q", local))
		}
		if remote != "" {
			problems = append(problems, fmt.Sprintf("remote_addr=%q", remote))
		}
		network, err := adoptDatagramSocket(o.sock, problems, o, true)
		if err != nil {
			return nil, nil, err
		}
		p, err := newProtocol(call, factory)
		if err != nil {
			return nil, nil, err
		}
		return startDatagramEndpoint(t, o.sock, network, p, false)
	}
	var lsa, rsa *unix.SockaddrUnix
	if local != "" {
		if lsa, err = unixSockaddr(local); err != nil {
			return nil, nil, err
		}
	}
	if remote != "" {
		if rsa, err = unixSockaddr(remote); err != nil {
			return nil, nil, err
		}
	}
	if lsa != nil && !isAbstractUnixName(local) {
		// A stale socket file of an earlier endpoint would make the bind
		// fail; anything else at the path is not ours to remove.
		if fi, err := os.Stat(local); err == nil && fi.Mode()&os.ModeSocket != 0 {
			os.Remove(local)
		}
	}
	fd, err := newSocket(unix.AF_UNIX, unix.SOCK_DGRAM)
	if err != nil {
		return nil, nil, err
	}
	if lsa != nil {
		if err := unix.Bind(fd, lsa); err != nil {
			unix.Close(fd)
			return nil, nil, os.NewSyscallError("bind", err)
		}
	}
	if rsa != nil {
		if err := sockConnect(t, fd, rsa); err != nil {
			unix.Close(fd)
			return nil, nil, err
		}
	}
	p, err := newProtocol(call, factory)
	if err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	return startDatagramEndpoint(t, fd, "unixgram", p, rsa != nil)
}

// isAbstractUnixName reports whether path is an abstract socket name
// (Linux): it begins with a NUL, or with "@" as Go spells it.
func isAbstractUnixName(path string) bool {
	return abstractUnixNames && path != "" && (path[0] == 0 || path[0] == '@')
}

// unixName is path as this package reports it: an abstract name with
// "@" for its leading NUL.
func unixName(path string) string {
	if abstractUnixNames && path != "" && path[0] == 0 {
		return "@" + path[1:]
	}
	return path
}

// unixSender is DatagramReceived's address for a Unix datagram's sender:
// nil for a socket with no name (asyncio's None).
func unixSender(sa unix.Sockaddr) net.Addr {
	su, ok := sa.(*unix.SockaddrUnix)
	if !ok || su.Name == "" {
		return nil
	}
	return &net.UnixAddr{Name: su.Name, Net: "unixgram"}
}

// checkUnixDestination checks SendTo's addr for a Unix datagram endpoint:
// nil or a *net.UnixAddr whose path the system can take.
func checkUnixDestination(addr net.Addr) error {
	if addr == nil {
		return nil
	}
	ua, ok := addr.(*net.UnixAddr)
	if !ok {
		return &asyncio.ValueError{Msg: fmt.Sprintf("Invalid address: %v (%T) on a Unix datagram endpoint, which sends to a *net.UnixAddr", addr, addr)}
	}
	if ua == nil {
		return nil // as a nil addr
	}
	_, err := unixSockaddr(ua.Name)
	return err
}

// isRemote reports whether addr names the connected endpoint's peer.
func (tr *datagramTransport) isRemote(addr net.Addr) bool {
	if ua, ok := addr.(*net.UnixAddr); ok && ua != nil && tr.network == "unixgram" {
		return unixName(ua.Name) == tr.remote.String()
	}
	return addr.String() == tr.remote.String()
}
