//go:build unix

package aio

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// This file holds asyncio's low-level socket coroutines (loop.sock_recv,
// sock_sendall, sock_connect, sock_accept, sock_recvfrom, sock_sendto) over non-blocking file
// descriptors, and the small address helpers the transports share. The
// system calls that differ between Unix systems live in the sock_*.go
// files.
//
// Every coroutine first tries the system call; only when it would block
// does it register interest with the loop's selector and suspend the
// calling task. The interest is removed as soon as the fd is ready and,
// when the wait is cancelled, before the cancellation is returned, so the
// fd is never left with a stale callback.

// ioWait identifies the waitIO registered for one direction of an fd on
// one loop.
type ioWait struct {
	loop  *asyncio.Loop
	fd    int
	write bool
}

// ioWaiters maps each ioWait to the future of the waitIO whose callback
// is registered, so that a cancelled wait removes the fd's callback only
// if it is still its own: another call on the same fd (the typical
// "cancel a sock_recv, then sock_recv again") may have replaced it since
// (asyncio's _sock_read_done checks its handle the same way). Loops on
// several goroutines share it, hence the lock; a map under a lock, not a
// sync.Map, whose every store allocates (W9 makes two waits a request).
var ioWaiters struct {
	sync.Mutex
	m map[ioWait]*asyncio.Future[struct{}]
}

// storeIOWaiter records f as key's waiter.
func storeIOWaiter(key ioWait, f *asyncio.Future[struct{}]) {
	ioWaiters.Lock()
	if ioWaiters.m == nil {
		ioWaiters.m = make(map[ioWait]*asyncio.Future[struct{}])
	}
	ioWaiters.m[key] = f
	ioWaiters.Unlock()
}

// ioWaiterOf returns key's waiter, nil if none (for tests).
func ioWaiterOf(key ioWait) *asyncio.Future[struct{}] {
	ioWaiters.Lock()
	defer ioWaiters.Unlock()
	return ioWaiters.m[key]
}

// dropIOWaiter forgets key's waiter if it is f, and reports whether it
// was.
func dropIOWaiter(key ioWait, f *asyncio.Future[struct{}]) bool {
	ioWaiters.Lock()
	defer ioWaiters.Unlock()
	if ioWaiters.m[key] != f {
		return false
	}
	delete(ioWaiters.m, key)
	return true
}

// waitIO suspends t until fd is readable (write false) or writable.
func waitIO(t *asyncio.T, fd int, write bool) error {
	l := t.Loop()
	f := asyncio.NewFuture[struct{}](l)
	// The loop's methods are called, not bound (a method value
	// allocates): W9 makes two waits per request.
	key := ioWait{l, fd, write}
	remove := func() {
		if write {
			l.RemoveWriter(fd)
		} else {
			l.RemoveReader(fd)
		}
	}
	ready := func() {
		remove() // level-triggered: one wakeup per wait, no spinning
		dropIOWaiter(key, f)
		if !f.Done() {
			f.SetResult(struct{}{})
		}
	}
	var err error
	if write {
		err = l.AddWriter(fd, ready)
	} else {
		err = l.AddReader(fd, ready)
	}
	if err != nil {
		return err
	}
	storeIOWaiter(key, f)
	// A cancelled wait, and one whose task a closing loop unwinds (only
	// deferred calls run then), removes its callback and its entry if
	// they are still its own; a wait that ended ready has dropped them.
	defer func() {
		if dropIOWaiter(key, f) {
			remove()
		}
	}()
	_, err = f.Await(t)
	return err
}

func isWouldBlock(err error) bool { return err == unix.EAGAIN || err == unix.EWOULDBLOCK }

// checkNonBlocking is asyncio's debug-mode check of the sock_* coroutines:
// a blocking socket would block the whole loop in the system call, so in
// debug mode it is a *ValueError "the socket must be non-blocking" (from
// NewSocket, SockAccept and the transports' sockets it never is).
func checkNonBlocking(t *asyncio.T, fd int, call string) error {
	if !t.Loop().Debug() {
		return nil
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	if flags&unix.O_NONBLOCK == 0 {
		return &asyncio.ValueError{Msg: call + ": the socket must be non-blocking"}
	}
	return nil
}

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
// A negative n is a *asyncio.ValueError "negative buffersize in recv", as
// socket.recv raises, before anything is read.
func SockRecv(t *asyncio.T, fd int, n int) ([]byte, error) {
	if n < 0 {
		return nil, &asyncio.ValueError{Msg: "negative buffersize in recv"}
	}
	if err := checkNonBlocking(t, fd, "SockRecv"); err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	k, err := SockRecvInto(t, fd, buf)
	return buf[:k], err
}

// SockRecvInto reads into buf (asyncio's loop.sock_recv_into) and returns
// the number of bytes read, 0 at EOF. Cancellation as for SockRecv.
func SockRecvInto(t *asyncio.T, fd int, buf []byte) (int, error) {
	if err := checkNonBlocking(t, fd, "SockRecvInto"); err != nil {
		return 0, err
	}
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
	if err := checkNonBlocking(t, fd, "SockSendall"); err != nil {
		return err
	}
	_, err := sockSendall(t, fd, data)
	return err
}

// sockSendall is SockSendall's loop; it also returns how much of data
// the socket took, for callers that count it (the sendfile fallback).
func sockSendall(t *asyncio.T, fd int, data []byte) (sent int, err error) {
	for sent < len(data) {
		n, err := sendNoSignal(fd, data[sent:])
		switch {
		case err == nil:
			sent += n
		case isWouldBlock(err):
			if err := waitIO(t, fd, true); err != nil {
				return sent, err
			}
		default:
			if err == unix.EPIPE {
				err = simSendError(fd, err)
			}
			return sent, os.NewSyscallError("send", err)
		}
	}
	return sent, nil
}

// SockRecvFrom reads one datagram of up to n bytes from the non-blocking
// socket fd, suspending t until one arrives (asyncio's loop.sock_recvfrom,
// 3.11), and returns it with the sender's address: a *net.UDPAddr, or a
// *net.UnixAddr for a "unixgram" socket. Cancellation as for SockRecv. A
// negative n is a *asyncio.ValueError "negative buffersize in recvfrom",
// as socket.recvfrom raises.
func SockRecvFrom(t *asyncio.T, fd int, n int) ([]byte, net.Addr, error) {
	if n < 0 {
		return nil, nil, &asyncio.ValueError{Msg: "negative buffersize in recvfrom"}
	}
	if err := checkNonBlocking(t, fd, "SockRecvFrom"); err != nil {
		return nil, nil, err
	}
	buf := make([]byte, n)
	k, addr, err := SockRecvFromInto(t, fd, buf)
	return buf[:k], addr, err
}

// SockRecvFromInto reads one datagram into buf (asyncio's
// loop.sock_recvfrom_into; its nbytes argument is buf[:nbytes] here) and
// returns its length and the sender's address. Cancellation as for
// SockRecv.
func SockRecvFromInto(t *asyncio.T, fd int, buf []byte) (int, net.Addr, error) {
	if err := checkNonBlocking(t, fd, "SockRecvFromInto"); err != nil {
		return 0, nil, err
	}
	// A Unix socket's sender is decoded as getsockname's (recvfromUnix):
	// x/sys/unix would cut an abstract name at an inner NUL.
	sa, _ := unix.Getsockname(fd)
	_, isUnix := sa.(*unix.SockaddrUnix)
	for {
		var k int
		var from unix.Sockaddr
		var err error
		if isUnix {
			k, from, err = recvfromUnix(fd, buf)
		} else {
			k, from, err = unix.Recvfrom(fd, buf, 0)
		}
		switch {
		case err == nil && isUnix:
			return k, unixSender(from), nil // an unnamed sender: nil, asyncio's None
		case err == nil:
			return k, sockaddrToAddr(from, datagramNetwork(from)), nil
		case err == unix.EINTR:
			continue
		case isWouldBlock(err):
			if err := waitIO(t, fd, false); err != nil {
				return 0, nil, err
			}
		default:
			return 0, nil, os.NewSyscallError("recvfrom", err)
		}
	}
}

// datagramNetwork is the network sockaddrToAddr needs for a datagram
// sender's address.
func datagramNetwork(sa unix.Sockaddr) string {
	if _, ok := sa.(*unix.SockaddrUnix); ok {
		return "unixgram"
	}
	return "udp"
}

// SockSendTo sends data as one datagram to addr, a *net.UDPAddr or
// *net.UnixAddr, from the non-blocking socket fd, suspending t while the
// socket cannot take it (asyncio's loop.sock_sendto, 3.11), and returns
// the number of bytes sent. Another address type, or a nil one, is a
// *net.AddrError; a Unix path the system cannot take is an error that
// says why, as for SockConnect. If t is cancelled while waiting, nothing
// was sent.
func SockSendTo(t *asyncio.T, fd int, data []byte, addr net.Addr) (int, error) {
	if err := checkUnixAddr(addr); err != nil {
		return 0, err
	}
	sa, _ := addrToSockaddr(addr)
	if sa == nil {
		return 0, &net.AddrError{Err: "unsupported address type", Addr: fmt.Sprintf("%T %v", addr, addr)}
	}
	if err := checkNonBlocking(t, fd, "SockSendTo"); err != nil {
		return 0, err
	}
	for {
		n, err := unix.SendmsgN(fd, data, nil, sa, unix.MSG_NOSIGNAL)
		switch {
		case err == nil:
			return n, nil
		case err == unix.EINTR:
			continue
		case isWouldBlock(err):
			if err := waitIO(t, fd, true); err != nil {
				return 0, err
			}
		default:
			return 0, os.NewSyscallError("sendto", err)
		}
	}
}

// SockConnect connects the non-blocking socket fd to addr, a
// *net.TCPAddr, *net.UDPAddr or *net.UnixAddr (asyncio's
// loop.sock_connect): it starts a non-blocking connect, suspends t until
// the socket is writable, then reads SO_ERROR, returning e.g. an error
// matching syscall.ECONNREFUSED. Another address type, or a nil one, is
// a *net.AddrError, and so is a Unix path too long for the system; a
// Unix path with a NUL byte in it (not an abstract name) is a
// *asyncio.ValueError. If t is cancelled while waiting, the write
// interest is removed; the caller should close fd.
func SockConnect(t *asyncio.T, fd int, addr net.Addr) error {
	if err := checkUnixAddr(addr); err != nil {
		return err
	}
	sa, _ := addrToSockaddr(addr)
	if sa == nil {
		return &net.AddrError{Err: "unsupported address type", Addr: fmt.Sprintf("%T %v", addr, addr)}
	}
	if err := checkNonBlocking(t, fd, "SockConnect"); err != nil {
		return err
	}
	// The caller's fd may be blocking (checked in debug mode only, as
	// asyncio does): an ordinary system call, which the scheduler sees.
	return connectAndWait(t, fd, sa, unix.Connect)
}

// sockConnect is SockConnect on a socket address, for a socket the
// package made non-blocking: the connect is a raw system call (see
// rawConnect).
func sockConnect(t *asyncio.T, fd int, sa unix.Sockaddr) error {
	return connectAndWait(t, fd, sa, rawConnect)
}

// connectAndWait connects fd to sa with connect, then waits for the
// outcome of a connection in progress.
func connectAndWait(t *asyncio.T, fd int, sa unix.Sockaddr, connect func(int, unix.Sockaddr) error) error {
	var err error
	for {
		err = connect(fd, sa)
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
		soerr, err := rawSoError(fd)
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
// an unnamed peer). On Linux an abstract peer name is "@" and the
// name's every byte (asyncio's b'\x00name'), as net's RemoteAddr has it,
// except that a NUL inside the name is kept, as asyncio keeps it, where
// net cuts the name there.
func SockAccept(t *asyncio.T, fd int) (int, net.Addr, error) {
	if err := checkNonBlocking(t, fd, "SockAccept"); err != nil {
		return -1, nil, err
	}
	for {
		nfd, sa, err := sysAccept(fd)
		switch {
		case err == nil:
			if su, ok := sa.(*unix.SockaddrUnix); ok && (su.Name == "@" || abstractUnixNames && strings.HasPrefix(su.Name, "@")) {
				// "@" is x/sys/unix's name for an unnamed peer on Linux,
				// and for an abstract socket with an empty name; and it
				// cuts an abstract name at a NUL inside it ("\x00ab\x00cd"
				// is "@ab", another socket's name). getpeername tells
				// them apart and keeps the whole name
				// (sock_raw_linux.go's getsockname).
				if psa, err := getpeername(nfd); err == nil {
					sa = psa
				}
			}
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
	return sockaddrForZone(ip, port, "")
}

// sockaddrForZone is sockaddrFor with an IPv6 zone (net.UDPAddr's Zone:
// an interface name or index), the scope id a link-local address needs
// (asyncio's address 4-tuple has it; without it the system refuses a
// bind to, a connect to or a send to a link-local address with EINVAL).
func sockaddrForZone(ip net.IP, port int, zone string) (unix.Sockaddr, int) {
	if ip4 := ip.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip4)
		return sa, unix.AF_INET
	}
	sa := &unix.SockaddrInet6{Port: port, ZoneId: zoneIndex(zone)}
	copy(sa.Addr[:], ip.To16())
	return sa, unix.AF_INET6
}

// zoneIndex is the interface index of an IPv6 zone: a number as it is,
// an interface name looked up (0, no scope, if there is none by that
// name, as net's own zone handling does).
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// zoneName is the zone of a scope id as net.UDPAddr spells it: the
// interface's name, or the number if there is no interface by it.
func zoneName(id uint32) string {
	if id == 0 {
		return ""
	}
	if ifi, err := net.InterfaceByIndex(int(id)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(id), 10)
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
		addr := ipAddr(a.Addr[:], a.Port, network)
		if a.ZoneId != 0 {
			switch addr := addr.(type) {
			case *net.UDPAddr:
				addr.Zone = zoneName(a.ZoneId)
			case *net.TCPAddr:
				addr.Zone = zoneName(a.ZoneId)
			}
		}
		return addr
	case *unix.SockaddrUnix:
		if network != "unixgram" {
			network = "unix"
		}
		return &net.UnixAddr{Name: a.Name, Net: network}
	}
	return nil
}

// ipAddr is a *net.UDPAddr for network "udp", else a *net.TCPAddr, with
// a copy of ip: the address and its IP share one allocation.
func ipAddr(ip []byte, port int, network string) net.Addr {
	if network == "udp" {
		a, cp := newAddrWithIP[net.UDPAddr](ip)
		a.addr = net.UDPAddr{IP: cp, Port: port}
		return &a.addr
	}
	a, cp := newAddrWithIP[net.TCPAddr](ip)
	a.addr = net.TCPAddr{IP: cp, Port: port}
	return &a.addr
}

// addrWithIP is an address and the bytes of its IP, allocated together.
type addrWithIP[A any] struct {
	addr A
	ip   [net.IPv6len]byte
}

// newAddrWithIP allocates an addrWithIP holding a copy of ip and returns
// it with that copy, whose capacity is its length.
func newAddrWithIP[A any](ip []byte) (*addrWithIP[A], net.IP) {
	a := new(addrWithIP[A])
	n := copy(a.ip[:], ip)
	return a, a.ip[:n:n]
}

// validIPLen reports whether ip is nil (the wildcard) or of an IP's
// length: sockaddrFor would take any other for the IPv6 wildcard "::",
// and a send to it would reach this host.
func validIPLen(ip net.IP) bool {
	return len(ip) == 0 || len(ip) == net.IPv4len || len(ip) == net.IPv6len
}

// addrToSockaddr converts a *net.TCPAddr, *net.UDPAddr or *net.UnixAddr
// to a socket address and its family; nil for another type, a nil
// pointer, or an IP of a length no IP has.
func addrToSockaddr(a net.Addr) (unix.Sockaddr, int) {
	switch a := a.(type) {
	case *net.UDPAddr:
		if a != nil && validIPLen(a.IP) {
			return sockaddrForZone(a.IP, a.Port, a.Zone)
		}
	case *net.TCPAddr:
		if a != nil && validIPLen(a.IP) {
			return sockaddrForZone(a.IP, a.Port, a.Zone)
		}
	case *net.UnixAddr:
		if a != nil {
			if sa, err := unixSockaddr(a.Name); err == nil {
				return sa, unix.AF_UNIX
			}
		}
	}
	return nil, 0
}

// maxUnixPath is the longest AF_UNIX path the system takes: sun_path
// holds it with its terminating NUL (107 bytes on Linux, 103 on macOS and
// the BSDs).
var maxUnixPath = len(unix.RawSockaddrUnix{}.Path) - 1

// abstractUnixNames reports whether the system has abstract Unix socket
// names (Linux): a name that begins with a NUL, or "@" as Go spells it.
const abstractUnixNames = runtime.GOOS == "linux" || runtime.GOOS == "android"

// unixSockaddr is the socket address of a Unix socket path. A path the
// system cannot take is an error that names the mistake, before any
// socket exists (bind and connect would only say "invalid argument", or
// worse, take a shorter path than the one given):
//
//   - a path with a NUL byte in it, other than an abstract name (whose
//     bytes are all its own), is a *asyncio.ValueError: the kernel
//     would end the path at the NUL, and bind a file, or connect to one,
//     of a shorter name (asyncio's create_unix_server refuses it in
//     os.stat: ValueError "embedded null character in path");
//   - a path longer than sun_path takes is a *net.AddrError "AF_UNIX path
//     too long" (asyncio's OSError) that names the limit;
//   - on Linux, an abstract name that fills sun_path (108 bytes with its
//     leading NUL or "@") is a *net.AddrError that says why: the kernel
//     and asyncio take it, but golang.org/x/sys/unix's SockaddrUnix,
//     which binds and connects here, keeps a byte for a terminator that
//     an abstract name does not have, and refuses it (EINVAL).
func unixSockaddr(path string) (*unix.SockaddrUnix, error) {
	abstract := abstractUnixNames && path != "" && (path[0] == 0 || path[0] == '@')
	switch {
	case !abstract && strings.IndexByte(path, 0) >= 0:
		return nil, &asyncio.ValueError{Msg: fmt.Sprintf("AF_UNIX path %q: embedded null byte", path)}
	case abstract && len(path) == maxUnixPath+1:
		return nil, &net.AddrError{
			Err: fmt.Sprintf("AF_UNIX abstract name of %d bytes: the kernel takes up to %d, but golang.org/x/sys/unix binds and connects at most %d",
				len(path), maxUnixPath+1, maxUnixPath),
			Addr: fmt.Sprintf("%q", path),
		}
	case len(path) > maxUnixPath:
		return nil, &net.AddrError{
			Err:  fmt.Sprintf("AF_UNIX path too long: %d bytes, the limit is %d", len(path), maxUnixPath),
			Addr: path,
		}
	}
	return &unix.SockaddrUnix{Name: path}, nil
}

// checkUnixAddr is unixSockaddr's verdict on addr if it is a Unix
// address, and nil for any other.
func checkUnixAddr(addr net.Addr) error {
	if ua, ok := addr.(*net.UnixAddr); ok && ua != nil {
		_, err := unixSockaddr(ua.Name)
		return err
	}
	return nil
}

// localAddr and peerAddr return fd's addresses, or nil.
func localAddr(fd int, network string) net.Addr {
	if a, _, ok := simAddrs(fd); ok {
		return a
	}
	sa, err := getsockname(fd)
	if err != nil {
		return nil
	}
	return sockaddrToAddr(sa, network)
}

func peerAddr(fd int, network string) net.Addr {
	if _, a, ok := simAddrs(fd); ok {
		return a
	}
	sa, err := getpeername(fd)
	if err != nil {
		return nil
	}
	return sockaddrToAddr(sa, network)
}
