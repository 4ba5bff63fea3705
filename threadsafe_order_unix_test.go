//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || aix || solaris

package asyncio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// A CallSoonThreadsafe made before the loop polls runs before the I/O
// callbacks of that poll: in asyncio it is in the ready queue already
// when select returns. (The submission here comes in the before-poll
// hook, after the loop's last look at its side queue.)
func TestLOOP1_ThreadsafeBeforeTheIOOfTheNextPoll(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	fds := make([]int, 2)
	if err := unix.Pipe(fds); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var r eventLog
	if err := l.AddReader(fds[0], func() {
		r.log("reader")
		_ = l.RemoveReader(fds[0])
		l.CallSoon(l.Stop)
	}); err != nil {
		t.Fatal(err)
	}
	hooked := false
	l.SetBeforePoll(func() {
		if hooked {
			return
		}
		hooked = true
		write(t, fds[1], "x")
		submitted := make(chan struct{})
		go func() {
			_, _ = l.CallSoonThreadsafe(func() { r.log("threadsafe") })
			close(submitted)
		}()
		//asynciovet:ignore blockingcall the test orders another goroutine's submission before the poll; it takes no time
		<-submitted
	})
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{"threadsafe", "reader"}, &r)
}
