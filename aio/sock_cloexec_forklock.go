//go:build aix || darwin

package aio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysSocket creates a non-blocking, close-on-exec socket where socket(2)
// takes no SOCK_NONBLOCK/SOCK_CLOEXEC flags. As Go's net package does,
// the socket is created and marked close-on-exec under a read lock of
// syscall.ForkLock, which os/exec holds for writing while it forks, so
// no child can inherit the descriptor in between.
func sysSocket(family, typ int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, typ, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// sysPipe makes a close-on-exec pipe where there is no pipe2, under
// syscall.ForkLock as sysSocket does (os.Pipe does the same).
func sysPipe(p []int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p); err != nil {
		return err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return nil
}
