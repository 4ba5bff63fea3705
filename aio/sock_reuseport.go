//go:build unix && !(solaris || illumos)

package aio

import (
	"os"

	"golang.org/x/sys/unix"
)

// setReusePort sets SO_REUSEPORT (WithReusePort).
func setReusePort(fd int) error {
	return os.NewSyscallError("setsockopt", unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1))
}
