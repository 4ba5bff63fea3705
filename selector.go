package asyncio

import "time"

// selector is the loop's view of the operating system's readiness
// notification: one small interface, one file per backend chosen at build
// time (epoll, kqueue, poll, or none; see DESIGN.md), as in Redis's ae.c.
// Interest is level-triggered, so changing it never drops an event.
type selector interface {
	// set declares the interest in fd: read, write, both, or neither
	// (which unregisters it).
	set(fd int, read, write bool) error
	// poll waits up to timeout (negative: forever, 0: not at all) and
	// appends the ready descriptors to events, one entry per fd. An
	// interrupted wait returns no events and no error. Wakeups (see
	// wakeup) are consumed, not reported. A hang-up or error wakes the
	// watched directions; a backend may also report one that is not
	// watched (epoll does), which the loop ignores.
	poll(timeout time.Duration, events []ioEvent) ([]ioEvent, error)
	// wakeup makes a blocked poll return; safe from any goroutine.
	wakeup()
	close() error
}

// ioEvent is one ready file descriptor.
type ioEvent struct {
	fd                 int
	readable, writable bool
}

// mergeEvent appends ev to events, or ORs it into the entry for the same
// fd appended since start: kqueue reports the read and write filters of
// one fd as two entries, the loop wants one. The scan is quadratic in the
// number of ready fds, which a backend bounds by its buffer (128) and is
// usually tiny. It lives here, not in selector_kqueue.go, so that its test
// runs on Linux.
func mergeEvent(events []ioEvent, start int, ev ioEvent) []ioEvent {
	for i := start; i < len(events); i++ {
		if events[i].fd == ev.fd {
			events[i].readable = events[i].readable || ev.readable
			events[i].writable = events[i].writable || ev.writable
			return events
		}
	}
	return append(events, ev)
}

func (l *Loop) ensureSelector() error {
	if l.sel != nil {
		return nil
	}
	s, err := newSelector()
	if err != nil {
		return err
	}
	l.sel = s
	l.fds = make(map[int]*fdHandlers)
	return nil
}

func (l *Loop) updateInterest(fd int, h *fdHandlers) error {
	if h.reader == nil && h.writer == nil {
		delete(l.fds, fd)
	}
	return l.sel.set(fd, h.reader != nil, h.writer != nil)
}

// AddReader calls fn whenever fd is readable (asyncio's add_reader),
// replacing a previous reader of fd. The watch is level-triggered: fn is
// called again each iteration while data is left. fd should be
// non-blocking (AddReader does not change its mode). A blocking fd is
// accepted and watched the same way, but a read in fn that finds nothing
// after all (another reader took the data, or fn reads more than one
// chunk) blocks the whole loop until data comes: no other task or
// callback runs meanwhile (the watchdog of SetBlockedThreshold reports
// it). With a blocking fd, read once per call, or set it non-blocking
// (syscall.SetNonblock) and stop at EAGAIN. A regular file is always
// readable: on Linux, epoll refuses it (an error wrapping EPERM).
func (l *Loop) AddReader(fd int, fn func()) error {
	return l.addIO(fd, fn, true, "AddReader")
}

// AddWriter calls fn whenever fd is writable (asyncio's add_writer),
// replacing a previous writer of fd.
func (l *Loop) AddWriter(fd int, fn func()) error {
	return l.addIO(fd, fn, false, "AddWriter")
}

// addIO and removeIO check the goroutine in every mode and on every
// architecture: a registration from another goroutine races with the
// selector and the fd table, and these calls are rare next to a system
// call each.
func (l *Loop) addIO(fd int, fn func(), reader bool, op string) error {
	l.checkThreadAlways(op)
	if l.closed {
		return errLoopClosed()
	}
	if fn == nil {
		return valueErrorf("%s: nil callback", op)
	}
	if err := l.ensureSelector(); err != nil {
		return err
	}
	h := l.fds[fd]
	if h == nil {
		h = &fdHandlers{}
	}
	nh := &Handle{fn: fn}
	old := &h.reader
	if !reader {
		old = &h.writer
	}
	if *old != nil {
		(*old).Cancel()
	}
	*old = nh
	l.fds[fd] = h
	if err := l.updateInterest(fd, h); err != nil {
		*old = nil
		if h.reader == nil && h.writer == nil {
			delete(l.fds, fd)
		}
		return err
	}
	return nil
}

// RemoveReader stops watching fd for reading (asyncio's remove_reader)
// and reports whether a reader was registered.
func (l *Loop) RemoveReader(fd int) bool { return l.removeIO(fd, true, "RemoveReader") }

// RemoveWriter stops watching fd for writing (asyncio's remove_writer)
// and reports whether a writer was registered.
func (l *Loop) RemoveWriter(fd int) bool { return l.removeIO(fd, false, "RemoveWriter") }

func (l *Loop) removeIO(fd int, reader bool, op string) bool {
	l.checkThreadAlways(op)
	if l.closed || l.sel == nil {
		return false
	}
	h := l.fds[fd]
	if h == nil {
		return false
	}
	slot := &h.reader
	if !reader {
		slot = &h.writer
	}
	if *slot == nil {
		return false
	}
	(*slot).Cancel()
	*slot = nil
	_ = l.updateInterest(fd, h)
	return true
}

// Watching reports whether fd is registered for reading and for writing
// (Redis ae's aeGetFileEvents): tests and diagnostics use it to see what
// the loop waits on.
func (l *Loop) Watching(fd int) (reading, writing bool) {
	h := l.fds[fd]
	if h == nil {
		return false, false
	}
	return h.reader != nil, h.writer != nil
}
