//go:build darwin || dragonfly || freebsd || netbsd || openbsd || aix || solaris || (linux && asyncio_poll)

package asyncio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// wakePipe is the self-pipe the kqueue and poll backends wake on. A pipe
// rather than EVFILT_USER or an eventfd because every Unix has one: older
// OpenBSD has no EVFILT_USER, and poll(2) systems have neither.
type wakePipe struct{ r, w int }

func newWakePipe() (wakePipe, error) {
	var p [2]int
	// pipe2 is missing on darwin and aix, so close-on-exec is set after
	// the fact, under ForkLock as the os and net packages do, so that a
	// concurrent fork+exec cannot inherit the descriptors in between.
	syscall.ForkLock.RLock()
	err := unix.Pipe(p[:])
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return wakePipe{}, err
	}
	// Non-blocking at both ends: wake never blocks on a full pipe (a full
	// pipe already means a wakeup is pending) and drain stops when empty.
	for _, fd := range p {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return wakePipe{}, err
		}
	}
	return wakePipe{r: p[0], w: p[1]}, nil
}

// wake makes the read end readable; safe from any goroutine.
func (p wakePipe) wake() {
	one := [1]byte{1}
	for {
		// EAGAIN (pipe full) is success: a wakeup is already pending.
		if _, err := unix.Write(p.w, one[:]); err != unix.EINTR {
			return
		}
	}
}

// drain consumes every pending wakeup, so that a level-triggered wait does
// not report the pipe again.
func (p wakePipe) drain() {
	var buf [64]byte
	for {
		n, err := unix.Read(p.r, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n < len(buf) { // empty (EAGAIN) or emptied by this read
			return
		}
	}
}

func (p wakePipe) close() {
	unix.Close(p.r)
	unix.Close(p.w)
}
