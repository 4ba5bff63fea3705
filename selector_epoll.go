//go:build linux

package asyncio

import (
	"time"

	"golang.org/x/sys/unix"
)

// epollSelector is the Linux backend: level-triggered epoll plus an
// eventfd for wakeups from other goroutines.
type epollSelector struct {
	epfd       int
	eventfd    int
	registered map[int]uint32 // fd -> current event mask
	buf        []unix.EpollEvent
}

func newSelector() (selector, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(epfd)
		unix.Close(efd)
		return nil, err
	}
	return &epollSelector{epfd: epfd, eventfd: efd, registered: map[int]uint32{}, buf: make([]unix.EpollEvent, 128)}, nil
}

func (s *epollSelector) set(fd int, read, write bool) error {
	var mask uint32
	if read {
		mask |= unix.EPOLLIN
	}
	if write {
		mask |= unix.EPOLLOUT
	}
	old, had := s.registered[fd]
	switch {
	case mask == 0 && had:
		delete(s.registered, fd)
		return unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	case mask == 0 || (had && old == mask):
		return nil
	}
	ev := unix.EpollEvent{Events: mask, Fd: int32(fd)}
	op := unix.EPOLL_CTL_ADD
	if had {
		op = unix.EPOLL_CTL_MOD
	}
	if err := unix.EpollCtl(s.epfd, op, fd, &ev); err != nil {
		return err
	}
	s.registered[fd] = mask
	return nil
}

func (s *epollSelector) poll(timeout time.Duration, events []ioEvent) ([]ioEvent, error) {
	ms := -1
	if timeout >= 0 {
		// Round up, as asyncio does, so a timer is never polled for early.
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	n, err := unix.EpollWait(s.epfd, s.buf, ms)
	if err == unix.EINTR {
		return events, nil
	}
	if err != nil {
		return events, err
	}
	for _, ev := range s.buf[:n] {
		fd := int(ev.Fd)
		if fd == s.eventfd {
			var b [8]byte
			unix.Read(s.eventfd, b[:])
			continue
		}
		// Errors and hang-ups wake both directions, as in asyncio's
		// selectors: the callbacks then see the error on read/write.
		bad := ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0
		events = append(events, ioEvent{
			fd:       fd,
			readable: ev.Events&unix.EPOLLIN != 0 || bad,
			writable: ev.Events&unix.EPOLLOUT != 0 || bad,
		})
	}
	return events, nil
}

func (s *epollSelector) wakeup() {
	one := [8]byte{1}
	unix.Write(s.eventfd, one[:])
}

func (s *epollSelector) close() error {
	unix.Close(s.eventfd)
	return unix.Close(s.epfd)
}
