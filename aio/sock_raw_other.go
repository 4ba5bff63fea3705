//go:build unix && !linux

package aio

import "golang.org/x/sys/unix"

// rawRead reads from a socket the package made non-blocking. The raw
// system call of the Linux build is a measured win there only (see
// sock_raw_linux.go); elsewhere it is the ordinary read.
func rawRead(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return unix.Read(fd, p)
}

// rawSend sends on a socket the package made non-blocking, without
// SIGPIPE (see sock_raw_linux.go for the Linux form).
func rawSend(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return sendNoSignal(fd, p)
}

// rawSendv sends bufs with one vectored write, without SIGPIPE (iov is
// the Linux build's scratch space, unused here).
func rawSendv(fd int, bufs [][]byte, _ []unix.Iovec) (int, error) {
	for {
		n, err := unix.SendmsgBuffers(fd, bufs, nil, nil, unix.MSG_NOSIGNAL)
		switch err {
		case unix.EINTR:
			continue
		case unix.ENOTSOCK: // a pipe or other stream fd
			return writeBuffers(fd, bufs)
		}
		return n, err
	}
}

// getsockname and getpeername are unix.Getsockname and unix.Getpeername
// (see sock_raw_linux.go for the Linux form).
func getsockname(fd int) (unix.Sockaddr, error) { return unix.Getsockname(fd) }

func getpeername(fd int) (unix.Sockaddr, error) { return unix.Getpeername(fd) }

// recvfromUnix is recvfrom(2) on a Unix datagram socket (see
// sock_raw_linux.go for the Linux form, which decodes the sender's name
// itself).
func recvfromUnix(fd int, p []byte) (int, unix.Sockaddr, error) {
	return unix.Recvfrom(fd, p, 0)
}

// rawConnect is connect(2) on a socket the package made non-blocking
// (see sock_raw_linux.go for the raw Linux form).
func rawConnect(fd int, sa unix.Sockaddr) error { return unix.Connect(fd, sa) }

// rawSoError reads SO_ERROR, the outcome of a connect in progress.
func rawSoError(fd int) (int, error) {
	return unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
}

// rawSetNoDelay sets TCP_NODELAY (asyncio's _set_nodelay), ignoring
// errors as asyncio does.
func rawSetNoDelay(fd int) { unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) }

// rawClose closes a socket the package made and never handed out.
func rawClose(fd int) { unix.Close(fd) }
