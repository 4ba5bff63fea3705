package aio

import (
	"github.com/go-asyncio/asyncio"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file holds asyncio's low-level socket coroutines (loop.sock_recv,
// sock_sendall, sock_connect, sock_accept) over non-blocking file
// descriptors, and the small address helpers the transports share.
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
// handed to the loop). family is unix.AF_INET, AF_INET6 or AF_UNIX; typ is
// unix.SOCK_STREAM or SOCK_DGRAM.
func NewSocket(family, typ int) (int, error) {
	fd, err := unix.Socket(family, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
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

// rawRead is read(2) on a socket the package itself made non-blocking,
// made as a raw system call (no entersyscall/exitsyscall): it cannot
// block, and telling the scheduler about every call costs time and wakes
// the runtime's sysmon, which then polls every 20 µs (with GOMAXPROCS=1
// it preempts the loop's CPU to do so). Never for a caller's fd, which
// might be blocking. Errors are unix.Errno values, as from unix.Read.
func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawSend is send(2) with MSG_NOSIGNAL (sendto without an address, as
// asyncio's sock.send), as a raw system call; same rules as rawRead.
func rawSend(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_NOSIGNAL, 0, 0)
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.ENOTSOCK: // a pipe or other stream fd
			return sendNoSignal(fd, p)
		}
		return 0, e
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

// SockConnect connects the non-blocking socket fd to sa (asyncio's
// loop.sock_connect): it starts a non-blocking connect, suspends t until
// the socket is writable, then reads SO_ERROR, returning e.g. an error
// matching syscall.ECONNREFUSED. If t is cancelled while waiting, the
// write interest is removed; the caller should close fd.
func SockConnect(t *asyncio.T, fd int, sa unix.Sockaddr) error {
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
// (asyncio's loop.sock_accept), suspending t until one arrives. The new fd
// is non-blocking and close-on-exec.
func SockAccept(t *asyncio.T, fd int) (int, unix.Sockaddr, error) {
	for {
		nfd, sa, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch {
		case err == nil:
			return nfd, sa, nil
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

// sockaddrToAddr converts a socket address to a net.Addr of network
// ("tcp", "udp" or "unix"/"unixgram").
func sockaddrToAddr(sa unix.Sockaddr, network string) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		ip := net.IP(append([]byte(nil), a.Addr[:]...))
		if network == "udp" {
			return &net.UDPAddr{IP: ip, Port: a.Port}
		}
		return &net.TCPAddr{IP: ip, Port: a.Port}
	case *unix.SockaddrInet6:
		ip := net.IP(append([]byte(nil), a.Addr[:]...))
		if network == "udp" {
			return &net.UDPAddr{IP: ip, Port: a.Port}
		}
		return &net.TCPAddr{IP: ip, Port: a.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: network}
	}
	return nil
}

func addrToSockaddr(a net.Addr) (unix.Sockaddr, int) {
	switch a := a.(type) {
	case *net.UDPAddr:
		return sockaddrFor(a.IP, a.Port)
	case *net.TCPAddr:
		return sockaddrFor(a.IP, a.Port)
	case *net.UnixAddr:
		return &unix.SockaddrUnix{Name: a.Name}, unix.AF_UNIX
	}
	return nil, 0
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
