//go:build aix || darwin || netbsd || openbsd || (solaris && !illumos)

package aio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysAccept accepts a connection on the listening socket fd where
// golang.org/x/sys/unix has no accept4: accept, then close-on-exec under
// syscall.ForkLock (see sysSocket) and non-blocking.
func sysAccept(fd int) (int, unix.Sockaddr, error) {
	syscall.ForkLock.RLock()
	nfd, sa, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, nil, err
	}
	return nfd, sa, nil
}
