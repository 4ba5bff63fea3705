//go:build aix || solaris || ((linux || darwin || dragonfly || freebsd || netbsd || openbsd) && asyncio_poll)

package asyncio

import (
	"cmp"
	"math"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// selectorName names the compiled-in backend, for test logs.
const selectorName = "poll"

// pollSelector is the portable backend: poll(2), which every Unix has. It
// is the default where there is neither epoll nor kqueue (aix, solaris,
// illumos), and the asyncio_poll build tag selects it everywhere else, so
// that the whole suite can run on it on Linux.
//
// poll(2) has no descriptor of its own that the runtime poller could park
// on, so a wait blocks in the system call; the runtime hands the P to
// another thread after 20 µs. That is the price of the fallback.
type pollSelector struct {
	pipe     wakePipe
	interest map[int]uint8 // fd -> pollRead|pollWrite
	fds      []unix.PollFd // pipe first, then interest sorted by fd
	dirty    bool          // interest changed since fds was built
}

// Our own interest bits, because the type of PollFd.Events differs per
// system (int16, uint16 on aix).
const (
	pollRead = 1 << iota
	pollWrite
)

func newSelector() (selector, error) {
	p, err := newWakePipe()
	if err != nil {
		return nil, err
	}
	return &pollSelector{pipe: p, interest: map[int]uint8{}, dirty: true}, nil
}

func (s *pollSelector) set(fd int, read, write bool) error {
	var mask uint8
	if read {
		mask |= pollRead
	}
	if write {
		mask |= pollWrite
	}
	old, had := s.interest[fd]
	switch {
	case mask == 0 && !had, had && old == mask:
		return nil
	case mask == 0:
		delete(s.interest, fd)
	default:
		s.interest[fd] = mask
	}
	// The array is rebuilt at the next poll, not here: a transport adds
	// and drops write interest several times between two waits.
	s.dirty = true
	return nil
}

// rebuild lays out the poll array again from interest. Sorting by fd makes
// the order of callbacks across descriptors reproducible.
func (s *pollSelector) rebuild() {
	s.fds = append(s.fds[:0], unix.PollFd{Fd: int32(s.pipe.r), Events: unix.POLLIN})
	for fd, mask := range s.interest {
		pfd := unix.PollFd{Fd: int32(fd)}
		if mask&pollRead != 0 {
			pfd.Events |= unix.POLLIN
		}
		if mask&pollWrite != 0 {
			pfd.Events |= unix.POLLOUT
		}
		s.fds = append(s.fds, pfd)
	}
	slices.SortFunc(s.fds[1:], func(a, b unix.PollFd) int { return cmp.Compare(a.Fd, b.Fd) })
	s.dirty = false
}

// pollTimeout converts a timeout to poll's milliseconds, rounding up: a
// timer due in 0.1 ms must not turn into a poll(0) that returns at once
// and spins until the timer is due. Negative is forever (-1).
func pollTimeout(timeout time.Duration) int {
	if timeout < 0 {
		return -1
	}
	ms := timeout / time.Millisecond // not (timeout+999999)/1e6: that overflows
	if timeout%time.Millisecond != 0 {
		ms++
	}
	if ms > math.MaxInt32 { // about 25 days; the loop just waits again
		ms = math.MaxInt32
	}
	return int(ms)
}

func (s *pollSelector) poll(timeout time.Duration, events []ioEvent) ([]ioEvent, error) {
	if s.dirty {
		s.rebuild()
	}
	n, err := unix.Poll(s.fds, pollTimeout(timeout))
	if err == unix.EINTR {
		return events, nil
	}
	if err != nil {
		return events, err
	}
	if n > 0 && s.fds[0].Revents != 0 {
		s.pipe.drain()
		n--
	}
	for i := 1; i < len(s.fds) && n > 0; i++ {
		pfd := &s.fds[i]
		if pfd.Revents == 0 {
			continue
		}
		n--
		// A hang-up, an error or a closed fd wakes every direction the fd
		// is watched in, as EPOLLERR/EPOLLHUP do: the callbacks then see
		// EOF or the error on read/write. POLLHUP comes without POLLOUT,
		// so without this a writer to a closed peer would never run.
		bad := pfd.Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
		events = append(events, ioEvent{
			fd:       int(pfd.Fd),
			readable: pfd.Revents&unix.POLLIN != 0 || bad && pfd.Events&unix.POLLIN != 0,
			writable: pfd.Revents&unix.POLLOUT != 0 || bad && pfd.Events&unix.POLLOUT != 0,
		})
	}
	return events, nil
}

func (s *pollSelector) wakeup() { s.pipe.wake() }

func (s *pollSelector) close() error {
	s.pipe.close()
	return nil
}
