//go:build dragonfly || freebsd || illumos || linux

package aio

import "golang.org/x/sys/unix"

// sysAccept accepts a connection on the listening socket fd; the new
// socket is non-blocking and close-on-exec from the start (accept4).
func sysAccept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
