//go:build linux && !asyncio_poll

package asyncio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The order of a poll's events is the kernel's ready list: an fd reported
// by one poll (level-triggered, so requeued) comes ahead of fds that
// become ready after it, as CPython's selector sees it. The loop's epoll
// fd is also in the Go runtime's poller, whose epoll_wait scans its ready
// list at moments of its own and drops the entries not ready at that
// moment: the next wake-up then puts the fd at the back, so without the
// selector keeping the order, a run's order of events depended on the Go
// scheduler (tests/ports p181 flipped between runs with GOMAXPROCS=2).
func TestSelectorEpollOrderIgnoresOtherPollersOfTheEpollFD(t *testing.T) {
	for _, scanned := range []bool{false, true} {
		s := newTestSelector(t)
		a, aPeer := socketpair(t)
		b, bPeer := socketpair(t)
		mustSet(t, s, a, true, false)
		mustSet(t, s, b, true, false)
		write(t, aPeer, "x")
		checkReady(t, "a written", pollNow(t, s), ioEvent{fd: a, readable: true})
		if got := readAll(a); got != "x" {
			t.Fatalf("read %q", got)
		}
		if scanned {
			// What the runtime's netpoller does to the nested epoll fd.
			fds := []unix.PollFd{{Fd: int32(s.(*epollSelector).epfd), Events: unix.POLLIN}}
			if _, err := unix.Poll(fds, 0); err != nil {
				t.Fatal(err)
			}
		}
		write(t, bPeer, "y")
		write(t, aPeer, "z")
		checkReady(t, "a reported last time, then b", pollNow(t, s),
			ioEvent{fd: a, readable: true}, ioEvent{fd: b, readable: true})
	}
}
