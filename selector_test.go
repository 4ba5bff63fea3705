//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || aix || solaris

// The tests in this file run against whichever backend is compiled in
// (selectorName): epoll by default on Linux, poll with -tags asyncio_poll.

package asyncio

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketpair returns a connected non-blocking pair, closed at the end of
// the test. SOCK_NONBLOCK is Linux-only, hence SetNonblock.
func socketpair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	return fds[0], fds[1]
}

// newTestSelector returns the compiled-in backend, closed at the end of
// the test, and logs which one it is.
func newTestSelector(t *testing.T) selector {
	t.Helper()
	t.Logf("selector backend: %s", selectorName)
	s, err := newSelector()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close() })
	return s
}

// pollNow polls without waiting and fails the test on an error.
func pollNow(t *testing.T, s selector) []ioEvent {
	t.Helper()
	events, err := s.poll(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

// checkReady fails unless events is exactly want (nil: nothing ready).
func checkReady(t *testing.T, what string, events []ioEvent, want ...ioEvent) {
	t.Helper()
	if len(events) != len(want) {
		t.Fatalf("%s: got %+v, want %+v", what, events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Fatalf("%s: got %+v, want %+v", what, events, want)
		}
	}
}

func mustSet(t *testing.T, s selector, fd int, read, write bool) {
	t.Helper()
	if err := s.set(fd, read, write); err != nil {
		t.Fatalf("set(%d, %v, %v): %v", fd, read, write, err)
	}
}

func TestSelector_LevelTriggeredReadable(t *testing.T) {
	s := newTestSelector(t)
	a, b := socketpair(t)
	mustSet(t, s, a, true, false)
	checkReady(t, "nothing written", pollNow(t, s))
	write(t, b, "xy")
	// Level-triggered: the unread bytes keep a readable, poll after poll.
	for i := 0; i < 3; i++ {
		checkReady(t, "unread data", pollNow(t, s), ioEvent{fd: a, readable: true})
	}
	if got := readAll(a); got != "xy" {
		t.Fatalf("read %q", got)
	}
	checkReady(t, "drained", pollNow(t, s))
}

func TestSelector_ChangingInterestAndUnregistering(t *testing.T) {
	s := newTestSelector(t)
	a, b := socketpair(t)
	mustSet(t, s, a, false, true)
	checkReady(t, "write interest", pollNow(t, s), ioEvent{fd: a, writable: true})
	write(t, b, "x")
	// Both filters ready: one event for the fd (kqueue reports two).
	mustSet(t, s, a, true, true)
	checkReady(t, "both", pollNow(t, s), ioEvent{fd: a, readable: true, writable: true})
	mustSet(t, s, a, true, false)
	checkReady(t, "read only", pollNow(t, s), ioEvent{fd: a, readable: true})
	mustSet(t, s, a, true, false) // unchanged interest is a no-op
	checkReady(t, "read only again", pollNow(t, s), ioEvent{fd: a, readable: true})
	mustSet(t, s, a, false, false)
	checkReady(t, "unregistered, data pending", pollNow(t, s))
	mustSet(t, s, a, false, false) // unregistering twice is harmless
	mustSet(t, s, a, true, false)  // and registering again works
	checkReady(t, "registered again", pollNow(t, s), ioEvent{fd: a, readable: true})
}

func TestSelector_WakeupUnblocksForeverPoll(t *testing.T) {
	s := newTestSelector(t)
	a, _ := socketpair(t)
	mustSet(t, s, a, true, false) // registered, never ready
	// Whether wakeup comes before or during the wait, poll(-1) returns:
	// the wakeup is kept until consumed, so no timing is needed.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.wakeup() }()
	events, err := s.poll(-1, nil)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	checkReady(t, "woken: wakeups are not reported", events)
	// Several wakeups before a poll are consumed together.
	s.wakeup()
	s.wakeup()
	checkReady(t, "after two wakeups", pollNow(t, s))
	checkReady(t, "wakeups drained", pollNow(t, s))
}

func TestSelector_TimeoutReturnsNoEvents(t *testing.T) {
	s := newTestSelector(t)
	a, _ := socketpair(t)
	mustSet(t, s, a, true, false)
	// Only "no events" is asserted: how long the wait took is the OS's
	// business. 100 µs exercises the poll backend's rounding up to 1 ms.
	for _, d := range []time.Duration{100 * time.Microsecond, time.Millisecond} {
		events, err := s.poll(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkReady(t, d.String(), events)
	}
}

func TestSelector_HangUpReportsReadable(t *testing.T) {
	s := newTestSelector(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	a := fds[0]
	defer unix.Close(a)
	unix.SetNonblock(a, true)
	mustSet(t, s, a, true, false)
	unix.Close(fds[1])
	// Only readable is asserted: epoll reports a hang-up in both
	// directions whatever the interest, which the loop ignores.
	if ev := pollNow(t, s); len(ev) != 1 || ev[0].fd != a || !ev[0].readable {
		t.Fatalf("peer closed, read interest: got %+v, want fd %d readable", ev, a)
	}
	if got := readAll(a); got != "<EOF>" {
		t.Fatalf("read after hang-up: %q", got)
	}
	// A writer is woken too, to find EPIPE.
	mustSet(t, s, a, false, true)
	if ev := pollNow(t, s); len(ev) != 1 || ev[0].fd != a || !ev[0].writable {
		t.Fatalf("peer closed, write interest: got %+v, want fd %d writable", ev, a)
	}
	mustSet(t, s, a, false, false)
}

// countFDs counts this process's open descriptors where /proc says so.
func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count open descriptors: %v", err)
	}
	return len(ents)
}

// warmUp creates and closes one selector: the first may initialise the
// runtime's own poller (the epoll backend registers with it), which keeps
// its descriptors for good and would spoil a count.
func warmUp(t *testing.T) {
	t.Helper()
	t.Logf("selector backend: %s", selectorName)
	s, err := newSelector()
	if err != nil {
		t.Fatal(err)
	}
	s.close()
}

func TestSelector_CloseReleasesDescriptors(t *testing.T) {
	warmUp(t)
	a, _ := socketpair(t)
	before := countFDs(t)
	s, err := newSelector()
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, a, true, true)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if after := countFDs(t); after != before {
		t.Errorf("open descriptors: %d before the selector, %d after close", before, after)
	}
}

func TestMergeEvent(t *testing.T) {
	events := []ioEvent{{fd: 9, readable: true}} // before start: not merged into
	events = mergeEvent(events, 1, ioEvent{fd: 9, writable: true})
	events = mergeEvent(events, 1, ioEvent{fd: 3, readable: true})
	events = mergeEvent(events, 1, ioEvent{fd: 3, writable: true})
	events = mergeEvent(events, 1, ioEvent{fd: 9, readable: true})
	checkReady(t, "merged", events, ioEvent{fd: 9, readable: true}, ioEvent{fd: 9, readable: true, writable: true},
		ioEvent{fd: 3, readable: true, writable: true})
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
	// Adding and dropping write interest (EPOLL_CTL_MOD twice, two kevent
	// changes, two poll array rebuilds) while the read event is pending
	// must not lose it.
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
	if err := unix.Pipe(p); err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(p[0], true)
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

// THREAD-1 through the selector: the loop waits in the selector with no
// timer, and CallSoonThreadsafe wakes it through the selector's wakeup.
func TestTHREAD1_CallSoonThreadsafeWakesSelector(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	var r eventLog
	a, _ := socketpair(t)
	l.AddReader(a, r.logFn("idle reader"))
	blocked := make(chan struct{})
	l.CallSoon(func() { close(blocked) })
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-blocked
		waitUntilSleeping(l)
		l.CallSoonThreadsafe(func() { r.log("woken"); l.RemoveReader(a); l.Stop() })
	}()
	if err := l.RunForever(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	checkEvents(t, []string{"woken"}, &r)
}

func TestSelector_LoopCloseReleasesSelector(t *testing.T) {
	warmUp(t)
	l := NewLoop()
	a, _ := socketpair(t)
	before := countFDs(t)
	l.AddReader(a, func() {})
	mustClose(t, l)
	if after := countFDs(t); after != before {
		t.Errorf("open descriptors: %d before the selector, %d after Close", before, after)
	}
	if l.RemoveReader(a) {
		t.Error("RemoveReader on a closed loop must report false")
	}
}

// TestLOOP1_PollWithExpiredTimeoutReportsReadyFD: a poll whose timeout has
// already run out by the time it waits (a timer due in 1 ns) still reports
// the descriptors that are ready (LOOP-1: every iteration polls). The
// epoll backend's blocking wait goes through the runtime poller, whose
// deadline check comes before the first try; the poll backend rounds 1 ns
// up to 1 ms.
func TestLOOP1_PollWithExpiredTimeoutReportsReadyFD(t *testing.T) {
	l := NewLoop()
	defer mustClose(t, l)
	a, b := socketpair(t)
	if err := l.AddReader(a, func() {}); err != nil {
		t.Fatal(err)
	}
	write(t, b, "x")
	for i := 0; i < 100; i++ {
		events, err := l.sel.poll(time.Nanosecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 1 || events[0].fd != a || !events[0].readable {
			t.Fatalf("poll %d: got %+v, want fd %d readable", i, events, a)
		}
	}
}

// THREAD-6: registering or unregistering a file descriptor from a
// goroutine that is not running the loop panics in every mode before it
// touches the selector or the fd table: what the loop watches is
// unchanged, and its own reader still fires.
func TestTHREAD6_ForeignFDCallsLeaveRegistrationsAlone(t *testing.T) {
	a, b := socketpair(t)
	l := NewTestLoop()
	defer mustClose(t, l)
	var r eventLog
	tk := startTask(l, "main", func(t *T) error {
		readable := NewFuture[struct{}](t)
		if err := l.AddReader(a, func() {
			if !readable.Done() {
				readable.SetResult(struct{}{})
			}
		}); err != nil {
			return err
		}
		for _, c := range []struct {
			op   string
			call func()
		}{
			{"AddReader", func() { l.AddReader(a, func() {}) }},
			{"AddWriter", func() { l.AddWriter(a, func() {}) }},
			{"RemoveReader", func() { l.RemoveReader(a) }},
			{"AddReader of a new fd", func() { l.AddReader(b, func() {}) }},
		} {
			v := fromForeignGoroutine(c.call)
			rd, wr := l.Watching(a)
			rdB, _ := l.Watching(b)
			r.log("%s: rejected=%v watching a=%v/%v b=%v fds=%d", c.op, v != nil, rd, wr, rdB, l.Stats().FDs)
		}
		if _, err := unix.Write(b, []byte("x")); err != nil {
			return err
		}
		_, err := readable.Await(t)
		r.log("own reader fired: %v", err)
		l.RemoveReader(a)
		return err
	})
	if err := l.RunUntilComplete(tk); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, []string{
		"AddReader: rejected=true watching a=true/false b=false fds=1",
		"AddWriter: rejected=true watching a=true/false b=false fds=1",
		"RemoveReader: rejected=true watching a=true/false b=false fds=1",
		"AddReader of a new fd: rejected=true watching a=true/false b=false fds=1",
		"own reader fired: <nil>",
	}, &r)
}

// On virtual time with a file descriptor registered, outside work in
// flight (a Go call) still takes no virtual time: the loop waits in its
// selector until the call comes back instead of jumping to the next timer.
// The call is released once the loop sleeps (or, if the clock jumped, by
// the timer: Go then returns at 1h).
func TestVirtualTimeWaitsForOutsideWorkWithFDs(t *testing.T) {
	a, _ := socketpair(t)
	l := NewTestLoop()
	defer mustClose(t, l)
	l.AddReader(a, func() {}) // registered, never readable
	defer l.RemoveReader(a)
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	go func() {
		for {
			select {
			case <-release:
				return
			default:
			}
			l.threadsafeMu.Lock()
			sleeping := l.sleepMode != sleepAwake
			l.threadsafeMu.Unlock()
			if sleeping {
				open()
				return
			}
			runtime.Gosched()
		}
	}()
	task := CreateTask(l, func(tk *T) (time.Duration, error) {
		h := l.CallLater(time.Hour, open)
		defer h.Cancel()
		_, err := Go(tk, func(context.Context) (int, error) { <-release; return 0, nil })
		return l.Time(), err
	})
	if err := l.RunUntilComplete(task); err != nil {
		t.Fatal(err)
	}
	if at, _ := task.Result(); at != 0 {
		t.Errorf("the Go call returned at %v: the clock moved while it was in flight", at)
	}
}
