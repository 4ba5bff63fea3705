//go:build linux && !asyncio_poll

package asyncio

import (
	"cmp"
	"errors"
	"math"
	"os"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// selectorName names the compiled-in backend, for test logs.
const selectorName = "epoll"

// epollSelector is the Linux backend: level-triggered epoll plus an
// eventfd for wakeups from other goroutines.
//
// A wait that may block does not block in epoll_wait itself: a goroutine
// blocked in a system call keeps its P, and with GOMAXPROCS=1 the runtime's
// sysmon retakes that P after 20 µs (a futex wake and context switches on
// every wait, and the P comes back through the scheduler). The epoll fd is
// instead registered with the runtime's own poller (an epoll fd is
// readable while events are ready), and a blocking wait parks the
// goroutine there, as the net package does, leaving the P idle.
type epollSelector struct {
	epfd       int
	eventfd    int
	registered map[int]uint32 // fd -> current event mask
	buf        []unix.EpollEvent

	file        *os.File        // owns epfd, registered with the runtime poller
	raw         syscall.RawConn // file's, for waits that may block
	deadlineSet bool            // file has a read deadline
	n           int             // result of the last waitNow
	err         error
	waitNow     func(uintptr) bool // s.tryWait, bound once

	// The previous poll's report, to keep the kernel's order (see
	// keepOrder): reported[fd] is 1 + the fd's place in it, 0 if not
	// in it; last lists those fds; truncated is set when it filled buf.
	reported  []int32
	last      []int
	truncated bool
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
	// Non-blocking, so that os.NewFile registers it with the runtime poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		unix.Close(efd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "epoll")
	raw, err := f.SyscallConn()
	if err != nil {
		f.Close()
		unix.Close(efd)
		return nil, err
	}
	s := &epollSelector{epfd: epfd, eventfd: efd, registered: map[int]uint32{}, buf: make([]unix.EpollEvent, 128), file: f, raw: raw}
	s.waitNow = s.tryWait
	return s, nil
}

// tryWait polls without blocking; it reports whether the wait is over
// (events or an error), for RawConn.Read.
// It is a raw system call, like rawRead: with timeout 0 it cannot block.
func (s *epollSelector) tryWait(uintptr) bool {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(s.epfd), uintptr(unsafe.Pointer(&s.buf[0])), uintptr(len(s.buf)), 0, 0, 0)
	s.n, s.err = int(n), nil
	if e != 0 {
		s.n, s.err = 0, e
	}
	return s.n != 0 || s.err != nil
}

// wait fills s.n/s.err: at once for timeout 0, else parked on the runtime
// poller until an event, the timeout (negative: none), or a wakeup.
func (s *epollSelector) wait(timeout time.Duration) {
	if timeout == 0 {
		s.tryWait(0)
		return
	}
	if timeout > 0 {
		s.file.SetReadDeadline(time.Now().Add(timeout))
		s.deadlineSet = true
	} else if s.deadlineSet {
		s.file.SetReadDeadline(time.Time{})
		s.deadlineSet = false
	}
	s.n, s.err = 0, nil
	if err := s.raw.Read(s.waitNow); err != nil {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			s.err = err
			return
		}
		// Timed out. A deadline already past fails before the first
		// try: poll once anyway, so every poll reports what is ready.
		if s.n == 0 && s.err == nil {
			s.tryWait(0)
		}
	}
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
		if fd < len(s.reported) {
			s.reported[fd] = 0 // the kernel forgets its place
		}
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
	s.wait(timeout)
	n, err := s.n, s.err
	if err == unix.EINTR {
		return events, nil
	}
	if err != nil {
		return events, err
	}
	start := len(events)
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
	s.keepOrder(events[start:], n == len(s.buf))
	return events, nil
}

// keepOrder puts events in the order of the kernel's ready list as only
// this selector's polls would leave it, and remembers them for the next
// poll. Level-triggered, an fd a poll reports goes back on the ready
// list, in report order, ahead of every fd that becomes ready later; the
// next poll reports it first if it is ready again (CPython's order,
// tests/ports p181). But epfd is also in the Go runtime's poller, and its
// epoll_wait, at moments the Go scheduler chooses, scans our list and
// drops the entries not ready just then; a later wake-up puts such an fd
// at the back. So the fds of the previous report that are ready now come
// first, in their previous order, then the others in the kernel's. (When
// the previous poll filled buf, the kernel reports the rest first:
// nothing is reordered then.)
func (s *epollSelector) keepOrder(events []ioEvent, truncated bool) {
	if len(s.last) > 0 && !s.truncated {
		// Already in order, the usual case: the previous report's fds
		// form a prefix, increasing.
		prev, inOrder := int32(0), true
		for _, ev := range events {
			r := s.rank(ev.fd)
			if r == 0 {
				prev = math.MaxInt32
				continue
			}
			if r < prev {
				inOrder = false
				break
			}
			prev = r
		}
		if !inOrder {
			slices.SortStableFunc(events, func(x, y ioEvent) int {
				rx, ry := s.rank(x.fd), s.rank(y.fd)
				if rx == 0 {
					rx = math.MaxInt32
				}
				if ry == 0 {
					ry = math.MaxInt32
				}
				return cmp.Compare(rx, ry)
			})
		}
	}
	for _, fd := range s.last {
		s.reported[fd] = 0
	}
	s.last = s.last[:0]
	for i, ev := range events {
		if ev.fd >= len(s.reported) {
			s.reported = append(s.reported, make([]int32, ev.fd+1-len(s.reported))...)
		}
		s.reported[ev.fd] = int32(i + 1)
		s.last = append(s.last, ev.fd)
	}
	s.truncated = truncated
}

// rank is 1 + fd's place in the previous report, 0 if not in it.
func (s *epollSelector) rank(fd int) int32 {
	if fd < len(s.reported) {
		return s.reported[fd]
	}
	return 0
}

func (s *epollSelector) wakeup() {
	one := [8]byte{1}
	unix.Write(s.eventfd, one[:])
}

func (s *epollSelector) close() error {
	unix.Close(s.eventfd)
	return s.file.Close()
}
