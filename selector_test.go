//go:build linux

package asyncio

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketpair returns a connected non-blocking pair, closed at the end of
// the test.
func socketpair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func write(t *testing.T, fd int, s string) {
	t.Helper()
	if _, err := unix.Write(fd, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

func readAll(fd int) string {
	buf := make([]byte, 256)
	n, err := unix.Read(fd, buf)
	if err != nil || n < 0 {
		return "<" + err.Error() + ">"
	}
	if n == 0 {
		return "<EOF>"
	}
	return string(buf[:n])
}

// guard stops a real-time loop that a broken test would leave blocked.
func guard(t *testing.T, l *Loop) *TimerHandle {
	return l.CallLater(10*time.Second, func() { t.Error("guard timer fired: the loop was stuck"); l.Stop() })
}

func TestSelector_ReaderAndWriter(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, b := socketpair(t)
	g := guard(t, l)
	if err := l.AddReader(a, func() {
		r.log("a readable: %q", readAll(a))
		r.log("RemoveReader: %v %v", l.RemoveReader(a), l.RemoveReader(a))
		l.Stop()
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.AddWriter(b, func() {
		r.log("b writable")
		write(t, b, "hello")
		r.log("RemoveWriter: %v %v", l.RemoveWriter(b), l.RemoveWriter(b))
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	g.Cancel()
	r.log("fds left: %d", len(l.fds))
	checkEvents(t, []string{"b writable", "RemoveWriter: true false", `a readable: "hello"`,
		"RemoveReader: true false", "fds left: 0"}, &r)
}

func TestLOOP1_ReadyThenIOThenTimers(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, b := socketpair(t)
	write(t, b, "x")
	l.CallLater(0, r.logFn("timer"))
	l.CallSoon(r.logFn("ready"))
	l.AddWriter(a, func() { r.log("writer"); l.RemoveWriter(a) })
	l.AddReader(a, func() { r.log("reader %q", readAll(a)); l.RemoveReader(a) })
	runOne(t, l)
	checkEvents(t, []string{"ready", "reader \"x\"", "writer", "timer"}, &r)
}

func TestSelector_CancelledRegistrationSkipped(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, b := socketpair(t)
	write(t, b, "x")
	// Both callbacks are queued in one iteration; the reader removes the
	// writer, whose queued handle must then be skipped (HANDLE-1).
	l.AddReader(a, func() { r.log("reader"); l.RemoveWriter(a); l.RemoveReader(a) })
	l.AddWriter(a, r.logFn("writer"))
	runOne(t, l)
	checkEvents(t, []string{"reader"}, &r)
}

func TestSelector_ChangingInterestKeepsEvent(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, b := socketpair(t)
	g := guard(t, l)
	l.AddReader(a, r.logFn("replaced reader"))
	l.AddReader(a, func() {
		r.log("reader %q", readAll(a))
		l.RemoveReader(a)
		l.Stop()
	})
	write(t, b, "kept")
	// Adding and dropping write interest (EPOLL_CTL_MOD twice) while the
	// read event is pending must not lose it.
	l.AddWriter(a, r.logFn("writer"))
	r.log("RemoveWriter: %v", l.RemoveWriter(a))
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	g.Cancel()
	checkEvents(t, []string{"RemoveWriter: true", `reader "kept"`}, &r)
}

func TestSelector_LevelTriggeredUntilDrained(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	p := make([]int, 2)
	if err := unix.Pipe2(p, unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	g := guard(t, l)
	write(t, p[1], "abcdef")
	calls := 0
	l.AddReader(p[0], func() {
		calls++
		buf := make([]byte, 3)
		n, _ := unix.Read(p[0], buf)
		r.log("read %q", buf[:n])
		if n == 0 {
			l.RemoveReader(p[0])
			l.Stop()
		} else if calls == 2 {
			unix.Close(p[1]) // EOF after the data
		}
	})
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	g.Cancel()
	checkEvents(t, []string{`read "abc"`, `read "def"`, `read ""`}, &r)
}

func TestSelector_VirtualTimePollsThenJumps(t *testing.T) {
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	a, b := socketpair(t)
	l.AddReader(a, func() {
		r.log("reader %q at %v", readAll(a), l.Time())
		l.RemoveReader(a)
	})
	l.CallLater(time.Hour, func() {
		r.log("timer at %v", l.Time())
		write(t, b, "late")
		l.AddReader(a, func() { r.log("reader %q at %v", readAll(a), l.Time()); l.RemoveReader(a); l.Stop() })
	})
	l.CallSoon(func() { write(t, b, "now") })
	start := time.Now()
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("virtual time waited %v for real", d)
	}
	checkEvents(t, []string{`reader "now" at 0s`, "timer at 1h0m0s", `reader "late" at 1h0m0s`}, &r)
}

// THREAD-1 through the selector: the loop blocks in epoll_wait with no
// timer, and CallSoonThreadsafe wakes it through the eventfd.
func TestTHREAD1_CallSoonThreadsafeWakesSelector(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, _ := socketpair(t)
	l.AddReader(a, r.logFn("idle reader"))
	blocked := make(chan struct{})
	l.CallSoon(func() { close(blocked) })
	var wg sync.WaitGroup
	wg.Go(func() {
		<-blocked
		waitUntilSleeping(l)
		l.CallSoonThreadsafe(func() { r.log("woken"); l.RemoveReader(a); l.Stop() })
	})
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	checkEvents(t, []string{"woken"}, &r)
}

func TestSelector_CloseReleasesSelector(t *testing.T) {
	l := NewLoop()
	a, _ := socketpair(t)
	l.AddReader(a, func() {})
	epfd := l.sel.(*epollSelector).epfd
	mustClose(t, l)
	if _, err := unix.FcntlInt(uintptr(epfd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("epoll fd still open after Close: %v", err)
	}
	if l.RemoveReader(a) {
		t.Error("RemoveReader on a closed loop must report false")
	}
}
