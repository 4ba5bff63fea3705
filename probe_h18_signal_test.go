//go:build unix

package asyncio

import (
	"errors"
	"syscall"
	"testing"
)

// On a closed loop, AddSignalHandler(SIGKILL) or (SIGSTOP) is the closed
// loop's error, as in CPython 3.13, whose add_signal_handler runs
// _check_closed before signal.signal fails with EINVAL:
//
//	l = asyncio.new_event_loop(); l.close()
//	l.add_signal_handler(signal.SIGKILL, print)
//	-> RuntimeError: Event loop is closed
//
// It used to be "sig 9 cannot be caught", against the order the doc
// comment promises.
func TestH18_SignalClosedLoopBeforeUncatchable(t *testing.T) {
	l := NewLoop()
	mustClose(t, l)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		err := l.AddSignalHandler(sig, func() {})
		if !errors.Is(err, ErrLoopClosed) {
			t.Errorf("AddSignalHandler(%v) on a closed loop: %s, want the closed loop's error", sig, describe(err))
		}
	}
	// An invalid number is still checked first, as _check_signal is.
	if err := l.AddSignalHandler(syscall.Signal(0), func() {}); errors.Is(err, ErrLoopClosed) || !errors.As(err, new(*ValueError)) {
		t.Errorf("invalid signal on a closed loop: %s", describe(err))
	}
}

// The signal numbers checkSignal accepts are those the system has, as
// Python's signal.valid_signals(): on macOS 1 to 31 (NSIG 32), where the
// bound used to be Linux's 64, so AddSignalHandler(syscall.Signal(40))
// succeeded there with a signal that does not exist. Checked here for
// each system's rule (this machine is Linux; the others build from the
// same table).
func TestH18_ValidSignalsPerSystem(t *testing.T) {
	for _, c := range []struct {
		goos  string
		valid []int
		bad   []int
	}{
		{"linux", []int{1, 9, 31, 34, 64}, []int{0, 32, 33, 65}},
		{"darwin", []int{1, 30, 31}, []int{0, 32, 33, 40, 64}},
		{"ios", []int{31}, []int{32}},
		{"freebsd", []int{1, 31, 32}, []int{0, 33, 64}},
		{"openbsd", []int{32}, []int{33}},
	} {
		for _, n := range c.valid {
			if !validSignal(c.goos, syscall.Signal(n)) {
				t.Errorf("%s: signal %d should be valid", c.goos, n)
			}
		}
		for _, n := range c.bad {
			if validSignal(c.goos, syscall.Signal(n)) {
				t.Errorf("%s: signal %d should be invalid", c.goos, n)
			}
		}
	}
	// On this system, through AddSignalHandler.
	l := NewLoop()
	defer mustClose(t, l)
	if err := l.AddSignalHandler(syscall.Signal(65), func() {}); !errors.As(err, new(*ValueError)) {
		t.Errorf("signal 65: %s", describe(err))
	}
}
