//go:build unix

package aio

import "golang.org/x/sys/unix"

// The socket reads and writes of transports, streams, TLS and Conn go
// through readFD, sendFD and sendvFD, so that tests can make any of them
// fail (EAGAIN, EINTR, ECONNRESET, EPIPE) or move fewer bytes than asked
// at chosen points: sockFaults, set by the package's tests before any
// loop runs (faults_test.go). In production it is nil, and the cost is
// one load and a predicted branch per system call.

// faultOp is the kind of I/O a fault applies to.
type faultOp uint8

const (
	faultRead faultOp = iota
	faultWrite
)

// faultInjector decides, before a read or write of size bytes on fd,
// whether it fails with err (no system call is made) or moves at most
// limit bytes (limit 0: unchanged).
type faultInjector interface {
	fault(op faultOp, fd, size int) (limit int, err error)
}

// sockFaults is nil except in tests.
var sockFaults faultInjector

// readFD reads from a socket the package made non-blocking.
func readFD(fd int, p []byte) (int, error) {
	if sockFaults != nil && len(p) > 0 {
		k, err := sockFaults.fault(faultRead, fd, len(p))
		if err != nil {
			return 0, err
		}
		if k > 0 && k < len(p) {
			p = p[:k]
		}
	}
	return rawRead(fd, p)
}

// sendFD writes to a socket the package made non-blocking, without
// SIGPIPE.
func sendFD(fd int, p []byte) (int, error) {
	if sockFaults != nil && len(p) > 0 {
		k, err := sockFaults.fault(faultWrite, fd, len(p))
		if err != nil {
			return 0, err
		}
		if k > 0 && k < len(p) {
			p = p[:k]
		}
	}
	n, err := rawSend(fd, p)
	if err == unix.EPIPE {
		err = simSendError(fd, err)
	}
	return n, err
}

// sendvFD writes bufs with one vectored write (iov: see rawSendv).
func sendvFD(fd int, bufs [][]byte, iov []unix.Iovec) (int, error) {
	if sockFaults != nil {
		size := 0
		for _, b := range bufs {
			size += len(b)
		}
		k, err := sockFaults.fault(faultWrite, fd, size)
		if err != nil {
			return 0, err
		}
		if k > 0 && k < size {
			bufs = truncateBufs(bufs, k)
		}
	}
	n, err := rawSendv(fd, bufs, iov)
	if err == unix.EPIPE {
		err = simSendError(fd, err)
	}
	return n, err
}

// truncateBufs returns the first k bytes of bufs as buffers (a fresh
// slice; the buffers are shared).
func truncateBufs(bufs [][]byte, k int) [][]byte {
	var out [][]byte
	for _, b := range bufs {
		if k <= 0 {
			break
		}
		b = b[:min(len(b), k)]
		out = append(out, b)
		k -= len(b)
	}
	return out
}
