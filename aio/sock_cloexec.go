//go:build dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris

package aio

import "golang.org/x/sys/unix"

// sysSocket creates a non-blocking, close-on-exec socket in one system
// call, so that no fork/exec on another goroutine can inherit it (the
// list of systems is the one Go's net package uses SOCK_CLOEXEC on).
func sysSocket(family, typ int) (int, error) {
	return unix.Socket(family, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// sysPipe makes a close-on-exec pipe in one system call (for a child's
// standard streams, subprocess.go).
func sysPipe(p []int) error { return unix.Pipe2(p, unix.O_CLOEXEC) }
