//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// This file holds asyncio's low-level socket coroutines (loop.sock_recv,
// sock_sendall, sock_connect, sock_accept) over non-blocking file
// descriptors, and the small address helpers the transports share. The
// system calls that differ between Unix systems live in the sock_*.go
// files.
//
// Every coroutine first tries the system call; only when it would block
// does it register interest with the loop's selector and suspend the
// calling task. The interest is removed as soon as the fd is ready and,
// when the wait is cancelled, before the cancellation is returned, so the
// fd is never left with a stale callback.

// waitIO suspends t until fd is readable (write false) or writable.
func waitIO(t *asyncio.T, fd int, write bool) error {
	l := t.Loop()
	f := asyncio.NewFuture[struct{}](l)
	add, remove := l.AddReader, l.RemoveReader
	if write {
		add, remove = l.AddWriter, l.RemoveWriter
	}
	if err := add(fd, func() {
		remove(fd) // level-triggered: one wakeup per wait, no spinning
		if !f.Done() {
			f.SetResult(struct{}{})
		}
	}); err != nil {
		return err
	}
	if _, err := f.Await(t); err != nil {
		remove(fd)
		return err
	}
	return nil
}

func isWouldBlock(err error) bool { return err == unix.EAGAIN || err == unix.EWOULDBLOCK }

// NewSocket creates a non-blocking, close-on-exec socket (socket.socket
// followed by setblocking(False), as asyncio requires of every socket
// handed to the loop) for network "tcp4", "tcp6", "udp4", "udp6", "unix"
// (a Unix stream socket) or "unixgram". Another network is a
// net.UnknownNetworkError. The caller owns the fd and closes it with
// syscall.Close (or hands it to NewConn).
func NewSocket(network string) (fd int, err error) {
	var family, typ int
	switch network {
	case "tcp4":
		family, typ = unix.AF_INET, unix.SOCK_STREAM
	case "tcp6":
		family, typ = unix.AF_INET6, unix.SOCK_STREAM
	case "udp4":
		family, typ = unix.AF_INET, unix.SOCK_DGRAM
	case "udp6":
		family, typ = unix.AF_INET6, unix.SOCK_DGRAM
	case "unix":
		family, typ = unix.AF_UNIX, unix.SOCK_STREAM
	case "unixgram":
		family, typ = unix.AF_UNIX, unix.SOCK_DGRAM
	default:
		return -1, net.UnknownNetworkError(network)
	}
	return newSocket(family, typ)
}

// newSocket is NewSocket by family and type, for the package's own use.
func newSocket(family, typ int) (int, error) {
	fd, err := sysSocket(family, typ)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// SockRecv reads up to n bytes from the non-blocking socket fd, suspending
// t until data or EOF is available (asyncio's loop.sock_recv). It returns
// an empty slice at EOF. If t is cancelled while waiting, the read
// interest is removed and the cancellation returned; no data is consumed.
func SockRecv(t *asyncio.T, fd int, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := SockRecvInto(t, fd, buf)
	return buf[:k], err
}

// SockRecvInto reads into buf (asyncio's loop.sock_recv_into) and returns
// the number of bytes read, 0 at EOF. Cancellation as for SockRecv.
func SockRecvInto(t *asyncio.T, fd int, buf []byte) (int, error) {
	for {
		k, err := unix.Read(fd, buf)
		switch {
		case err == nil:
			return k, nil
		case err == unix.EINTR:
			continue
		case isWouldBlock(err):
			if err := waitIO(t, fd, false); err != nil {
				return 0, err
			}
		default:
			return 0, os.NewSyscallError("recv", err)
		}
	}
}

// sendNoSignal writes to a socket without raising SIGPIPE when the peer
// is gone (EPIPE is returned instead).
func sendNoSignal(fd int, p []byte) (int, error) {
	for {
		n, err := unix.SendmsgN(fd, p, nil, nil, unix.MSG_NOSIGNAL)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENOTSOCK { // a pipe or other stream fd
			n, err = unix.Write(fd, p)
		}
		return n, err
	}
}

// SockSendall writes all of data to the non-blocking socket fd,
// suspending t whenever the socket's send buffer is full (asyncio's
// loop.sock_sendall). If t is cancelled while waiting, the write interest
// is removed and the cancellation returned; a prefix of data may have been
// sent, as in asyncio.
func SockSendall(t *asyncio.T, fd int, data []byte) error {
	for len(data) > 0 {
		n, err := sendNoSignal(fd, data)
		switch {
		case err == nil:
			data = data[n:]
		case isWouldBlock(err):
			if err := waitIO(t, fd, true); err != nil {
				return err
			}
		default:
			return os.NewSyscallError("send", err)
		}
	}
	return nil
}

// SockConnect connects the non-blocking socket fd to addr, a
// *net.TCPAddr, *net.UDPAddr or *net.UnixAddr (asyncio's
// loop.sock_connect): it starts a non-blocking connect, suspends t until
// the socket is writable, then reads SO_ERROR, returning e.g. an error
// matching syscall.ECONNREFUSED. Another address type, or a nil one, is
// a *net.AddrError, and so is a Unix path too long for the system. If t
// is cancelled while waiting, the write interest is removed; the caller
// should close fd.
func SockConnect(t *asyncio.T, fd int, addr net.Addr) error {
	if ua, ok := addr.(*net.UnixAddr); ok && ua != nil {
		if _, err := unixSockaddr(ua.Name); err != nil {
			return err
		}
	}
	sa, _ := addrToSockaddr(addr)
	if sa == nil {
		return &net.AddrError{Err: "unsupported address type", Addr: fmt.Sprintf("%T %v", addr, addr)}
	}
	return sockConnect(t, fd, sa)
}

// sockConnect is SockConnect on a socket address.
func sockConnect(t *asyncio.T, fd int, sa unix.Sockaddr) error {
	var err error
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err == nil {
		return nil
	}
	if err != unix.EINPROGRESS && !isWouldBlock(err) {
		return os.NewSyscallError("connect", err)
	}
	for {
		if err := waitIO(t, fd, true); err != nil {
			return err
		}
		soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return os.NewSyscallError("getsockopt", err)
		}
		switch e := syscall.Errno(soerr); {
		case soerr == 0:
			return nil
		case e == unix.EINPROGRESS || isWouldBlock(e) || e == unix.EINTR:
			continue // spurious wakeup: still connecting
		default:
			return os.NewSyscallError("connect", e)
		}
	}
}

// SockAccept accepts a connection on the non-blocking listening socket fd
// (asyncio's loop.sock_accept), suspending t until one arrives. It
// returns the new fd, non-blocking and close-on-exec, and the peer's
// address: a *net.TCPAddr, or a *net.UnixAddr (whose Name is empty for
// an unnamed peer).
func SockAccept(t *asyncio.T, fd int) (int, net.Addr, error) {
	for {
		nfd, sa, err := sysAccept(fd)
		switch {
		case err == nil:
			return nfd, sockaddrToAddr(sa, "tcp"), nil
		case err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		case isWouldBlock(err):
			if err := waitIO(t, fd, false); err != nil {
				return -1, nil, err
			}
		default:
			return -1, nil, os.NewSyscallError("accept", err)
		}
	}
}

// sockaddrFor builds the socket address of ip:port and its family.
func sockaddrFor(ip net.IP, port int) (unix.Sockaddr, int) {
	if ip4 := ip.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip4)
		return sa, unix.AF_INET
	}
	sa := &unix.SockaddrInet6{Port: port}
	copy(sa.Addr[:], ip.To16())
	return sa, unix.AF_INET6
}

// sockaddrToAddr converts a socket address to a net.Addr. For an IP
// address, network "udp" gives a *net.UDPAddr, any other a *net.TCPAddr;
// a Unix address is a *net.UnixAddr of network "unix", or "unixgram" when
// network says so.
func sockaddrToAddr(sa unix.Sockaddr, network string) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return ipAddr(a.Addr[:], a.Port, network)
	case *unix.SockaddrInet6:
		return ipAddr(a.Addr[:], a.Port, network)
	case *unix.SockaddrUnix:
		if network != "unixgram" {
			network = "unix"
		}
		return &net.UnixAddr{Name: a.Name, Net: network}
	}
	return nil
}

func ipAddr(ip []byte, port int, network string) net.Addr {
	cp := net.IP(append([]byte(nil), ip...))
	if network == "udp" {
		return &net.UDPAddr{IP: cp, Port: port}
	}
	return &net.TCPAddr{IP: cp, Port: port}
}

// addrToSockaddr converts a *net.TCPAddr, *net.UDPAddr or *net.UnixAddr
// to a socket address and its family; nil for another type or a nil
// pointer.
func addrToSockaddr(a net.Addr) (unix.Sockaddr, int) {
	switch a := a.(type) {
	case *net.UDPAddr:
		if a != nil {
			return sockaddrFor(a.IP, a.Port)
		}
	case *net.TCPAddr:
		if a != nil {
			return sockaddrFor(a.IP, a.Port)
		}
	case *net.UnixAddr:
		if a != nil && len(a.Name) <= maxUnixPath {
			return &unix.SockaddrUnix{Name: a.Name}, unix.AF_UNIX
		}
	}
	return nil, 0
}

// maxUnixPath is the longest AF_UNIX path the system takes: sun_path
// holds it with its terminating NUL (107 bytes on Linux, 103 on macOS and
// the BSDs).
var maxUnixPath = len(unix.RawSockaddrUnix{}.Path) - 1

// unixSockaddr is the socket address of a Unix socket path; a path the
// system cannot take is a *net.AddrError that says so and names the limit
// (bind and connect would only say "invalid argument").
func unixSockaddr(path string) (*unix.SockaddrUnix, error) {
	if len(path) > maxUnixPath {
		return nil, &net.AddrError{
			Err:  fmt.Sprintf("AF_UNIX path too long: %d bytes, the limit is %d", len(path), maxUnixPath),
			Addr: path,
		}
	}
	return &unix.SockaddrUnix{Name: path}, nil
}

// localAddr and peerAddr return fd's addresses, or nil.
func localAddr(fd int, network string) net.Addr {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil
	}
	return sockaddrToAddr(sa, network)
}

func peerAddr(fd int, network string) net.Addr {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return nil
	}
	return sockaddrToAddr(sa, network)
}
