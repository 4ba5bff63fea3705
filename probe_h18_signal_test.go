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
