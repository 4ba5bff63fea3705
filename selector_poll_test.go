//go:build aix || solaris || ((linux || darwin || dragonfly || freebsd || netbsd || openbsd) && asyncio_poll)

package asyncio

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestPollSelector_TimeoutRoundsUp(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want int
	}{
		{-1, -1},
		{0, 0},
		{time.Nanosecond, 1}, // a timer due in 0.1 ms must not spin on poll(0)
		{100 * time.Microsecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{time.Second, 1000},
		{math.MaxInt64, math.MaxInt32},
	} {
		if got := pollTimeout(tc.in); got != tc.want {
			t.Errorf("pollTimeout(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// A descriptor closed while registered (a misuse: asyncio requires
// remove_reader first) is reported (POLLNVAL) in the directions it is
// watched in, so its callback runs and sees EBADF instead of the loop
// ignoring it silently.
func TestPollSelector_ClosedFDReported(t *testing.T) {
	s := newTestSelector(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	mustSet(t, s, fds[0], false, true)
	unix.Close(fds[0])
	checkReady(t, "closed while watched", pollNow(t, s), ioEvent{fd: fds[0], writable: true})
	mustSet(t, s, fds[0], false, false)
	checkReady(t, "unregistered", pollNow(t, s))
}

// The array is laid out by fd, whatever the map's order, so callbacks on
// several ready descriptors run in a reproducible order.
func TestPollSelector_EventsInFDOrder(t *testing.T) {
	s := newTestSelector(t)
	var want []ioEvent
	for i := 0; i < 8; i++ {
		a, _ := socketpair(t)
		mustSet(t, s, a, false, true)
		want = append(want, ioEvent{fd: a, writable: true})
	}
	slices.SortFunc(want, func(a, b ioEvent) int { return cmp.Compare(a.fd, b.fd) })
	checkReady(t, "eight writable", pollNow(t, s), want...)
}
