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
