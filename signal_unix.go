//go:build unix

package asyncio

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// maxSignal is the largest signal number os/signal handles (its numSig
// is 65 on every system).
const maxSignal = 64

// checkSignal is asyncio's _check_signal: sig must be a signal number the
// system has (see validSignal).
func checkSignal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok || !validSignal(runtime.GOOS, s) {
		return &ValueError{Msg: fmt.Sprintf("invalid signal number %s", signalNumber(sig))}
	}
	return nil
}

// validSignal reports whether s is a signal number goos has and os/signal
// can deliver: 1 to 64 on Linux, without 32 and 33, which the C library
// reserves (as Python's signal.valid_signals()); 1 to 31 on macOS and
// iOS (NSIG is 32, as valid_signals() there); 1 to 32 on the BSDs, where
// the Go runtime's signal tables end (valid_signals() also lists
// FreeBSD's real-time signals, which Go cannot deliver). A bound of 64
// everywhere let AddSignalHandler accept, on macOS, a signal that does
// not exist and never arrives.
func validSignal(goos string, s syscall.Signal) bool {
	limit := syscall.Signal(maxSignal)
	switch goos {
	case "darwin", "ios":
		limit = 31
	case "freebsd", "openbsd", "netbsd", "dragonfly":
		limit = 32
	}
	if s < 1 || s > limit {
		return false
	}
	return goos != "linux" || (s != 32 && s != 33)
}

// catchable rejects the two signals no process can catch, with asyncio's
// RuntimeError (there, signal.signal fails with EINVAL).
func catchable(sig os.Signal) error {
	if s := sig.(syscall.Signal); s == syscall.SIGKILL || s == syscall.SIGSTOP {
		return runtimeErrorf("sig %d cannot be caught", int(s))
	}
	return nil
}

// signalNumber formats sig as Python prints it: its number.
func signalNumber(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		return fmt.Sprint(int(s))
	}
	return fmt.Sprint(sig)
}
