//go:build linux

package aio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// rawSendv is sendmsg(2) of bufs with MSG_NOSIGNAL (writev for a socket),
// as a raw system call; same rules as rawRead. iov is scratch space for
// at least len(bufs) entries, on the heap (the kernel reads it).
func rawSendv(fd int, bufs [][]byte, iov []unix.Iovec) (int, error) {
	k := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		iov[k].Base = &b[0]
		iov[k].SetLen(len(b))
		k++
	}
	if k == 0 {
		return 0, nil
	}
	defer clear(iov[:k]) // keep no references to sent chunks
	var msg unix.Msghdr
	msg.Iov = &iov[0]
	msg.SetIovlen(k)
	for {
		n, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_NOSIGNAL)
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		case unix.ENOTSOCK: // a pipe or other stream fd
			return unix.Writev(fd, bufs)
		}
		return 0, e
	}
}

// getsockname is unix.Getsockname without its hidden cost for IP
// sockets: on Linux, x/sys/unix asks every AF_INET or AF_INET6 socket its
// SO_PROTOCOL (to tell L2TP sockets apart), one more system call per
// address, two per connection (W9 profile, docs/w9-profile-2026-12-01.md).
// This decodes IPv4, IPv6 and Unix addresses itself and leaves the other
// families to x/sys/unix. A Unix address is decoded as x/sys/unix does
// (see unixAddrOf) but for an unnamed socket, whose name x/sys/unix makes
// "@", and an abstract name with a NUL inside, which it cuts there.
func getsockname(fd int) (unix.Sockaddr, error) {
	return rawSockaddr(fd, unix.SYS_GETSOCKNAME, unix.Getsockname)
}

// getpeername is getsockname for the peer's address.
func getpeername(fd int) (unix.Sockaddr, error) {
	return rawSockaddr(fd, unix.SYS_GETPEERNAME, unix.Getpeername)
}

func rawSockaddr(fd int, trap uintptr, fallback func(int) (unix.Sockaddr, error)) (unix.Sockaddr, error) {
	var rsa unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	_, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return nil, e
	}
	switch rsa.Addr.Family {
	case unix.AF_INET:
		pp := (*unix.RawSockaddrInet4)(unsafe.Pointer(&rsa))
		sa := &unix.SockaddrInet4{Addr: pp.Addr}
		p := (*[2]byte)(unsafe.Pointer(&pp.Port))
		sa.Port = int(p[0])<<8 + int(p[1])
		return sa, nil
	case unix.AF_INET6:
		pp := (*unix.RawSockaddrInet6)(unsafe.Pointer(&rsa))
		sa := &unix.SockaddrInet6{Addr: pp.Addr, ZoneId: pp.Scope_id}
		p := (*[2]byte)(unsafe.Pointer(&pp.Port))
		sa.Port = int(p[0])<<8 + int(p[1])
		return sa, nil
	case unix.AF_UNIX:
		return unixAddrOf((*unix.RawSockaddrUnix)(unsafe.Pointer(&rsa)), int(n)), nil
	}
	return fallback(fd)
}

// unixAddrOf decodes the Unix socket address of n bytes at pp. The name
// of an unnamed socket (an address no longer than its family: a client
// that did not bind, either end of a socketpair) is empty, as asyncio's
// name for it is the empty string; x/sys/unix makes it "@", as if it were
// an abstract socket. A path name ends at its first NUL, as x/sys/unix
// has it. An abstract socket's leading NUL becomes "@" (Go's convention,
// where asyncio has bytes), and its name is every byte the kernel gave,
// NULs included, as asyncio's (b'\x00ab\x00cd'): x/sys/unix ends it at
// the first NUL, a name that reaches another socket.
func unixAddrOf(pp *unix.RawSockaddrUnix, n int) *unix.SockaddrUnix {
	n = min(n-int(unsafe.Offsetof(pp.Path)), len(pp.Path))
	if n <= 0 {
		return &unix.SockaddrUnix{}
	}
	path := unsafe.Slice((*byte)(unsafe.Pointer(&pp.Path[0])), n)
	if path[0] == 0 {
		return &unix.SockaddrUnix{Name: "@" + string(path[1:])}
	}
	for i, b := range path {
		if b == 0 {
			path = path[:i]
			break
		}
	}
	return &unix.SockaddrUnix{Name: string(path)}
}

// recvfromUnix is recvfrom(2) on a Unix datagram socket, with the
// sender's address decoded as getsockname's (unixAddrOf): an abstract
// name keeps every byte the kernel gave, NULs included, where x/sys/unix
// ends it at the first NUL (a name that reaches another socket). An
// unnamed sender has no address (nil): the kernel gives none.
func recvfromUnix(fd int, p []byte) (int, unix.Sockaddr, error) {
	var rsa unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	r, _, e := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)), 0,
		uintptr(unsafe.Pointer(&rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return 0, nil, e
	}
	if rsa.Addr.Family != unix.AF_UNIX {
		return int(r), nil, nil
	}
	return int(r), unixAddrOf((*unix.RawSockaddrUnix)(unsafe.Pointer(&rsa)), int(n)), nil
}

// rawConnect is connect(2) on a socket the package made non-blocking, as
// a raw system call for IPv4 and IPv6 (other families go through
// x/sys/unix). Same rules as rawRead, and the reason matters most here:
// on loopback the kernel runs the whole handshake inside connect (20-30
// µs), long enough for sysmon to retake the P of a goroutine in an
// ordinary system call. With GOMAXPROCS=1 every connect then cost a P
// handoff and kept sysmon polling every 20 µs on the loop's CPU (W9:
// 8,130 sysmon sleeps for 5,000 requests, 880 with this, 500 with
// rawClose too).
func rawConnect(fd int, sa unix.Sockaddr) error {
	var ptr unsafe.Pointer
	var n uintptr
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		r := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: a.Addr}
		p := (*[2]byte)(unsafe.Pointer(&r.Port))
		p[0], p[1] = byte(a.Port>>8), byte(a.Port)
		ptr, n = unsafe.Pointer(&r), unix.SizeofSockaddrInet4
	case *unix.SockaddrInet6:
		r := unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: a.Addr, Scope_id: a.ZoneId}
		p := (*[2]byte)(unsafe.Pointer(&r.Port))
		p[0], p[1] = byte(a.Port>>8), byte(a.Port)
		ptr, n = unsafe.Pointer(&r), unix.SizeofSockaddrInet6
	default:
		return unix.Connect(fd, sa)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(ptr), n); e != 0 {
		return e
	}
	return nil
}

// rawSoError reads SO_ERROR (the outcome of a connect in progress) as a
// raw system call: getsockopt never blocks.
func rawSoError(fd int) (int, error) {
	var v int32
	l := uint32(unsafe.Sizeof(v))
	if _, _, e := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_ERROR, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0); e != 0 {
		return 0, e
	}
	return int(v), nil
}

// rawSetNoDelay sets TCP_NODELAY (asyncio's _set_nodelay) as a raw
// system call: setsockopt never blocks. Errors are ignored, as asyncio
// ignores them.
func rawSetNoDelay(fd int) {
	v := int32(1)
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY, uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0)
}

// rawClose is close(2) as a raw system call, for a socket the package
// made and never handed out (fdTransport.ownFD): nobody can have set
// SO_LINGER on it, the one option that makes close block (even on a
// non-blocking socket). Closing a TCP socket on loopback sends the FIN
// through the stack inside the call, long enough for sysmon (see
// rawConnect).
func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
