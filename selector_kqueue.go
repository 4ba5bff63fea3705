//go:build (darwin || dragonfly || freebsd || netbsd || openbsd) && !asyncio_poll

package asyncio

import (
	"time"

	"golang.org/x/sys/unix"
)

// selectorName names the compiled-in backend, for test logs.
const selectorName = "kqueue"

// kqueueSelector is the BSD and macOS backend: kqueue with one
// EVFILT_READ and one EVFILT_WRITE knote per interest, added without
// EV_CLEAR so that they stay level-triggered (asyncio's semantics; Go's
// runtime poller uses EV_CLEAR because it is edge-triggered), plus a
// self-pipe for wakeups.
//
// Unlike the epoll backend, a wait blocks in kevent itself instead of
// parking on the runtime poller: simpler, and this file cannot be run on
// the machines it is developed on, only compiled.
type kqueueSelector struct {
	kq         int
	pipe       wakePipe
	registered map[int]kqInterest
	change     [1]unix.Kevent_t
	buf        []unix.Kevent_t
}

type kqInterest struct{ read, write bool }

func newSelector() (selector, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	// kqueue(2) says a child created by fork does not inherit the queue;
	// close-on-exec costs nothing and guards a system where it would, as
	// the runtime's netpollinit does.
	unix.CloseOnExec(kq)
	p, err := newWakePipe()
	if err != nil {
		unix.Close(kq)
		return nil, err
	}
	s := &kqueueSelector{kq: kq, pipe: p, registered: map[int]kqInterest{}, buf: make([]unix.Kevent_t, 128)}
	if err := s.apply(p.r, unix.EVFILT_READ, unix.EV_ADD); err != nil {
		p.close()
		unix.Close(kq)
		return nil, err
	}
	return s, nil
}

// apply submits one change at once, with no event list: kevent(2) then
// returns at once even with a nil timeout (the runtime's netpollopen
// relies on it), reports a failed change through its own return value
// instead of an EV_ERROR entry, and stops at the first failure, so one
// change per call is what lets set return the error that belongs to it.
// AddReader and AddWriter change one filter at a time, so this costs no
// extra calls. (EV_RECEIPT would allow batching, but NetBSD lacks it.)
func (s *kqueueSelector) apply(fd, filter, flags int) error {
	unix.SetKevent(&s.change[0], fd, filter, flags)
	for {
		_, err := unix.Kevent(s.kq, s.change[:], nil, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

func (s *kqueueSelector) set(fd int, read, write bool) error {
	old := s.registered[fd]
	cur := old
	var err error
	if read != old.read {
		err = s.update(fd, unix.EVFILT_READ, read, &cur.read)
	}
	if err == nil && write != old.write {
		err = s.update(fd, unix.EVFILT_WRITE, write, &cur.write)
	}
	if cur.read || cur.write {
		s.registered[fd] = cur
	} else {
		delete(s.registered, fd)
	}
	return err
}

// update adds or deletes one filter and records in *on whether the knote
// exists afterwards. A failed delete still forgets the knote: it fails
// when the fd was closed first, and close already removed it.
func (s *kqueueSelector) update(fd, filter int, want bool, on *bool) error {
	if want {
		if err := s.apply(fd, filter, unix.EV_ADD); err != nil {
			return err
		}
		*on = true
		return nil
	}
	*on = false
	return s.apply(fd, filter, unix.EV_DELETE)
}

func (s *kqueueSelector) poll(timeout time.Duration, events []ioEvent) ([]ioEvent, error) {
	var tp *unix.Timespec
	if timeout >= 0 {
		ts := unix.NsecToTimespec(int64(timeout))
		// Darwin fails with EINVAL on waits beyond 10^8 s; the runtime
		// caps at 10^6 s (about 11 days) and so do we. The loop treats
		// the early return as any other and computes its timeout anew.
		if ts.Sec > 1e6 {
			ts.Sec = 1e6
		}
		tp = &ts
	}
	n, err := unix.Kevent(s.kq, nil, s.buf, tp)
	// ETIMEDOUT is not in kevent(2), but darwin has been seen to return
	// it for a timed wait (go.dev/issue/59679); like the runtime, take
	// it, and EINTR, as "nothing ready".
	if err == unix.EINTR || err == unix.ETIMEDOUT {
		return events, nil
	}
	if err != nil {
		return events, err
	}
	start := len(events)
	for i := range s.buf[:n] {
		ev := &s.buf[i]
		fd := int(ev.Ident)
		if fd == s.pipe.r {
			s.pipe.drain()
			continue
		}
		var r, w bool
		switch {
		case ev.Flags&unix.EV_ERROR != 0:
			// kevent returns EV_ERROR entries only for changes passed
			// with an event list, which poll never does; should one
			// come anyway, wake both directions so the callbacks' own
			// read or write reports the error (as with EPOLLERR).
			r, w = true, true
		case int(ev.Filter) == unix.EVFILT_READ:
			r = true
			// Some BSDs report a pipe whose reader has gone as EV_EOF on
			// the read filter only (see netpoll_kqueue.go), so EOF wakes
			// a writer too; the loop ignores it if there is none.
			w = ev.Flags&unix.EV_EOF != 0
		case int(ev.Filter) == unix.EVFILT_WRITE:
			w = true
		}
		events = mergeEvent(events, start, ioEvent{fd: fd, readable: r, writable: w})
	}
	return events, nil
}

func (s *kqueueSelector) wakeup() { s.pipe.wake() }

func (s *kqueueSelector) close() error {
	s.pipe.close()
	return unix.Close(s.kq)
}
